// The patch writer: a pax tar through zstd (checksummed frames), one pass.
// Members: .layover/manifest.json first, the payload in walk order (OCI
// layer convention: DIR/.wh.NAME deletions, DIR/.wh..wh..opq opaque dirs,
// hardlinks among captured files, sparse files as GNU sparse 1.0, user.*
// xattrs), then .layover/sums with every member's fingerprint.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "capture/patch/reader.h"
#include "capture/scan/walk/scan.h"
#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace capture {

inline constexpr const char* kManifestName = ".layover/manifest.json";
inline constexpr const char* kSumsName = ".layover/sums";
inline constexpr const char* kOriginalsName = ".layover/originals";  // before the sums (layover-patch/2)
inline constexpr const char* kOriginalName = ".layover/original";    // before its file (layover-patch/3)

struct OriginalContent {
    std::string_view data;
    std::string fingerprint;  // fingerprint_bytes(data), for .layover/sums
};

struct WriteOptions {
    // A file whose SEEK_DATA/SEEK_HOLE map has more data segments is stored
    // with its smallest holes as zeros, so that a reader with this
    // Limits::max_sparse_segments opens the patch.
    uint64_t max_sparse_segments = Limits{}.max_sparse_segments;
    // Originals (Manifest::originals, layover-patch/3): for a file, the base
    // content to write as a .layover/original member right before the
    // file's member (so that zstd compresses the new version against it),
    // or nullopt; valid until the calling thread's next call. The manifest
    // lists them in the order of those files. Called from the writer's
    // threads, several at once (see `threads`).
    std::function<base::Result<std::optional<OriginalContent>>(const Item&)> original;
    // Called with the whole content of each file member stored dense and at
    // most 1 MiB (read in one piece, so no second read): save's secret scan.
    // From the writer's threads too; what it returns is gathered into
    // *notes in member order.
    std::function<std::string(const Item&, std::string_view data)> on_content;
    std::string* notes = nullptr;
    // Threads that make members (read, fingerprint, build headers) while
    // this one feeds their bytes, in order, to the zstd frames: -1 as many
    // as CPUs (up to 4; none on one CPU or for a small patch), 0 none. The
    // patch's bytes are the same either way. Not with OpenFile.
    int threads = -1;
    // The caller fsyncs out_fd before using the patch: it is flushed to the
    // disk as it is written (ZstdWriter::flush_as_written), not all at the end.
    bool durable = false;
};

// Writes to out_fd (not closed). Upper files are re-opened fd-relative from
// upper_fd; one that changed since the scan fails the write.
base::Result<void> write_patch(int out_fd, const Manifest& m, const std::vector<Item>& items, int upper_fd,
                               const WriteOptions& opts = {});
// The same from a stack of layers (scan_layers): each file from its Item::layer.
base::Result<void> write_patch(int out_fd, const Manifest& m, const std::vector<Item>& items,
                               const std::vector<int>& layer_fds, const WriteOptions& opts = {});

// For patches not written from an upper layer (review's undo patches): a
// file member's data comes from open_file(item), an fd open for reading of
// exactly change.size bytes; every other member is written from its Change
// alone (symlink targets included), with nothing read from a tree.
using OpenFile = std::function<base::Result<base::Fd>(const Item&)>;
base::Result<void> write_patch(int out_fd, const Manifest& m, const std::vector<Item>& items, const OpenFile& open_file,
                               const WriteOptions& opts = {});

}  // namespace capture
