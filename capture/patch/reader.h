// The patch reader: the only way review (and anything else) reads a patch or
// a session. open() validates the WHOLE patch before returning: names, member
// types, limits, manifest/payload agreement, per-member fingerprints against
// .layover/sums, and zstd frame checksums. Nothing acts on an unvalidated patch.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "capture/scan/entry/change.h"
#include "capture/scan/entry/ignore.h"
#include "capture/scan/entry/step_range.h"
#include "helper/base/result.h"
#include "helper/store/layers/steps.h"

namespace capture {

struct Limits {
    uint64_t max_members = 1'000'000;
    uint64_t max_stored_bytes = 64ull << 30;  // sum of stored (data) bytes
    uint64_t max_logical_bytes = 1ull << 44;  // sum of logical sizes (sparse files) = 16 TiB
    uint64_t max_name_len = 65536;            // a path, not a component: 5000-deep trees exceed PATH_MAX
    uint64_t max_pax_header = 1 << 20;
    uint64_t max_manifest = 256ull << 20;
    uint64_t max_sparse_segments = 1'000'000;  // data segments of one sparse file (added by capture)
    // Not a limit on the patch: how much of its small files' decoded data
    // open() keeps in memory for read_data (capture/patch/kept_data.h);
    // 0 keeps none. apply sets it; verbs that read a few files leave it.
    uint64_t keep_decoded = 0;
};

// Whether a change's path is too long for a patch with the default limits:
// its whiteout or an opaque dir's marker adds up to 13 bytes (save refuses
// it; status marks it).
inline bool too_long_for_a_patch(size_t path_bytes) { return path_bytes + 13 > Limits{}.max_name_len; }

// Parse one limit flag (--max-members N, --max-stored-bytes N, --max-logical-bytes N,
// --max-name-len N, --max-pax-header N; N may end in K, M, G, T). Returns 1 if
// argv[i] was a limit flag (and advances i past its value), 0 if not, -1 on a
// bad value (with *error set). Verbs that open patches share it.
int parse_limit_flag(int argc, char** argv, int* i, Limits* limits, std::string* error);

struct Manifest {
    std::string format;  // "layover-patch/1"
    std::string target;
    std::string session;
    std::vector<std::string> command;
    std::string created;  // RFC 3339 UTC
    std::string version;
    std::vector<Change> changes;
    std::vector<BaseEntry> base;
    // Undo patches (`apply --undo-to`, docs/patch-format.md): kind "undo" and
    // the undo store they were exported from, relative to the target
    // (".layover-undo/ID"). Both empty for ordinary patches, and then not written.
    std::string kind;
    std::string undo_store;
    // Paths the ignore rules left out when it was saved (not written when 0).
    uint64_t ignored = 0;
    // layover-patch/2: the base contents of modified text files, stored once
    // each, in this order, in the member .layover/originals (docs/patch-format.md).
    struct Original {
        std::string fingerprint;
        uint64_t size = 0;
    };
    std::vector<Original> originals;
    // The session's step records, oldest first (the live changes last), when
    // it had frozen steps: history for a reviewer; apply never reads them.
    std::vector<steps::Record> steps;
};

// One payload member (OCI layer convention, names relative to the target).
struct Member {
    enum class Kind { File, Dir, Symlink, Hardlink, Fifo, Whiteout, Opaque };
    Kind kind = Kind::File;
    std::string path;  // for Whiteout/Opaque: the path deleted / the opaque dir
    uint32_t mode = 0;
    uint64_t size = 0;  // logical size
    int64_t mtime_ns = 0;
    std::string link_target;                            // symlink target, or hardlink's earlier member path
    std::map<std::string, std::string> xattrs;          // user.* only
    std::vector<std::pair<uint64_t, uint64_t>> sparse;  // (offset, length) data segments; empty = dense
};

// Streams one file member's data: (offset, bytes) chunks in order; holes are skipped.
using DataSink = std::function<base::Result<void>(uint64_t offset, const char* data, size_t len)>;

class Patch {
public:
    // Open and fully validate a patch file.
    static base::Result<Patch> open(const std::string& file, const Limits& limits = {});
    // SESSION|PATCH: an existing file path (contains '/' or ends in .tar.zst, or exists)
    // is a patch; otherwise a session name (captured on the fly to a private temp
    // file in the state dir, removed when the Patch is destroyed). `ignore`
    // applies to sessions only: a patch file holds what was saved.
    // A bare name that is both an existing file here and a session is
    // refused (which one was meant: write ./NAME for the file).
    static base::Result<Patch> open_source(const std::string& arg, const Limits& limits = {},
                                           const IgnoreOptions& ignore = {}, const StepRange& steps = {});
    // The session `name`, never a file (the exit prompt, --on-exit apply).
    static base::Result<Patch> open_session(const std::string& name, const Limits& limits = {},
                                            const IgnoreOptions& ignore = {}, const StepRange& steps = {});

    Patch(Patch&&) noexcept;
    Patch& operator=(Patch&&) noexcept;
    ~Patch();

    const Manifest& manifest() const;
    const std::vector<Member>& members() const;  // payload members in archive order
    const std::string& file() const;             // the patch file being read
    bool from_session() const;                   // opened via a session name

    // Second pass: for every File member, in order, call visit(member, sink-feeder).
    // visit returns a DataSink for that member (or nullptr to skip its data).
    // Data is decoded again at the offsets validation recorded (starting at
    // the nearest frame, no tar parsing) and checked against its fingerprint
    // once more: a patch file changed since open() is an error. Files whose
    // data open() kept (Limits::keep_decoded) come from memory instead, as
    // validated, in pieces of at most 1 MiB.
    base::Result<void> read_data(const std::function<DataSink(const Member&)>& visit) const;

    // Whether validation kept member m's bytes (Limits::keep_decoded): then
    // read_data hands its sink pointers into them, valid as long as this Patch.
    bool kept(const Member& m) const;

    // Convenience for diff: the whole content of one file member (limit-checked).
    base::Result<std::string> read_file(const std::string& path, uint64_t limit) const;

    // members()[i]'s fingerprint as the sums hold it (checked against its
    // data when the patch was opened): a File member's content's.
    const std::string& member_fingerprint(size_t i) const;

    // The original (base) content with this fingerprint, when the patch carries
    // it (validated: its fingerprint matches a modified file's base record).
    const std::string* original(const std::string& fingerprint) const;

private:
    Patch();
    struct Impl;
    Impl* impl_ = nullptr;
};

}  // namespace capture
