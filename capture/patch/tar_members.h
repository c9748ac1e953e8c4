// The patch writer's member maker (capture/patch/writer.h): libarchive's pax
// writer turning Items into tar members, written to a TarSink. One per
// thread: write_patch's own (the manifest, the sums, the end, and every
// member of a small patch) writes to the zstd frames; its chunk makers each
// write whole members to a ChunkPipe (capture/patch/chunk_pipe.h).
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capture/patch/tar_header.h"
#include "capture/patch/writer.h"
#include "capture/scan/entry/dircursor.h"
#include "capture/scan/entry/fingerprint.h"

struct archive;
struct archive_entry;

namespace capture {

// libarchive's entry for the member `h` (name, type, mode, owner 0, mtime,
// link, size): what TarMembers gives libarchive's pax writer when tar_head
// does not write the headers itself (xattrs and a sparse map are added to it).
void fill_entry(archive_entry* e, const TarHead& h);

class TarSink {
public:
    virtual ~TarSink() = default;
    virtual base::Result<void> write(const void* p, size_t n) = 0;
    // The next `bytes` belong together (ZstdWriter::group).
    virtual base::Result<void> group(size_t bytes, bool fast) = 0;
};

class TarMembers {
public:
    TarMembers(const std::vector<int>& layer_fds, const WriteOptions& opts, const OpenFile* open_file);
    ~TarMembers();
    TarMembers(const TarMembers&) = delete;
    TarMembers& operator=(const TarMembers&) = delete;

    base::Result<void> open(TarSink* sink);
    // fp: fingerprint_bytes(data) when the caller has it.
    base::Result<void> blob(const std::string& name, std::string_view data, std::string fp = "");
    // link_to: for a file, the earlier member it is a hard link of, or null.
    base::Result<void> item(const Item& it, const std::string* link_to);
    // Ends the last member (its padding), so the next bytes may come from
    // elsewhere: the stream stays whole when members are made apart.
    base::Result<void> end_member();
    // The sums (of sums() and the given ones before them, in that order)
    // and the end of the archive.
    base::Result<void> close();

    // (member name, fingerprint), in member order; and what on_content said.
    std::vector<std::pair<std::string, std::string>>& sums() { return sums_; }
    std::string& notes() { return notes_; }

    // libarchive's output, to the sink; false when the sink failed.
    bool write_out(const void* p, size_t n);

private:
    // What a member's header holds besides a TarHead; with any of it,
    // libarchive writes the header.
    struct Extras {
        const std::map<std::string, std::string>* xattrs = nullptr;
        const Segments* sparse = nullptr;  // the data segments of a sparse file
    };
    // Ends the member before, then writes this one's headers: by hand
    // (capture/patch/tar_header.h) when they are plain, else by libarchive.
    base::Result<void> begin(const TarHead& h, const std::string& path, const Extras& x);
    archive_entry* entry();
    base::Result<void> symlink(const Change& c);
    base::Result<void> marker(const std::string& name);
    base::Result<void> file(const Item& it, int dirfd, const std::string& name, const std::string* link_to);
    base::Result<void> skip_hole(uint64_t len, const std::string& path);
    base::Result<void> header(archive_entry* e, const std::string& path);
    base::Result<void> write(const void* p, size_t n, const std::string& path);
    base::Result<void> put_data(const void* p, size_t n, const std::string& path);
    base::Error changed(const std::string& path);  // a member's source changed while it was read
    base::Error lib_error(const std::string& what);
    base::Error io_or_lib(const std::string& what);

    TarSink* sink_ = nullptr;
    std::vector<DirCursor> cursors_;  // one per layer (Item::layer)
    const WriteOptions& opts_;
    const OpenFile* open_file_;
    struct archive* a_ = nullptr;
    archive_entry* e_ = nullptr;
    void* holes_;
    bool closed_ = false;
    bool lib_open_ = false;   // a member libarchive started, not yet ended
    bool hand_open_ = false;  // a member started by hand: its padding is due
    size_t hand_pad_ = 0;
    std::string io_error_;
    std::vector<std::pair<std::string, std::string>> sums_;
    std::string notes_;
};

}  // namespace capture
