// The structure of a frozen layer, read once and kept (docs/history.md,
// "Capture reads the stack"): each of its dirs' sorted names with their
// d_type, and the dir's overlay mark. A walk of a deep stack then merges the
// frozen layers' listings from memory instead of opening, listing and
// reading the mark of every layer's copy of every dir. A frozen layer is
// never written again; its index is keyed on the layer's root dir (device,
// inode, ctime, mtime, birth time) and built again when that differs.
// Kept in SESSION/layer-index (0600, temp + rename, not fsync'ed: a lost or
// torn file is an empty one, and every layer is listed again).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "helper/base/dir.h"
#include "helper/base/result.h"

namespace capture {

struct LayerIndex {
    struct Dir {
        std::vector<base::DirEntry> names;  // as base::list_dir gives them
        char mark = 0;                      // the dir's user.overlay.opaque: 'y', 'x', or 0
    };
    struct Key {
        uint64_t dev = 0, ino = 0;
        int64_t ctime_ns = 0, mtime_ns = 0, btime_ns = 0;
        bool operator==(const Key& o) const {
            return dev == o.dev && ino == o.ino && ctime_ns == o.ctime_ns && mtime_ns == o.mtime_ns &&
                   btime_ns == o.btime_ns;
        }
    };
    Key key;
    std::unordered_map<std::string, Dir> dirs;  // by path in the layer ("": its root)
    // The dir at `path`, or null when the layer has none there.
    const Dir* find(const std::string& path) const {
        auto it = dirs.find(path);
        return it == dirs.end() ? nullptr : &it->second;
    }
};

// The layer root's identity (statx of the open dir).
base::Result<LayerIndex::Key> layer_key(int layer_fd);
// Every dir of the layer open at layer_fd, listed (fd-relative, O_NOFOLLOW).
base::Result<LayerIndex> build_layer_index(int layer_fd);

// Pure: indexes as bytes and back. The reader treats the bytes as untrusted:
// anything malformed (a name with '/', ".", "..", a NUL, a truncated record)
// gives no indexes at all.
std::string indexes_to_bytes(const std::vector<const LayerIndex*>& indexes);
std::vector<LayerIndex> indexes_from_bytes(std::string_view data);

// The indexes of a stack's frozen layers (fds; -1 where a layer is not
// frozen, the live upper), null where none is kept: an empty layer, or one
// that could not be walked. Loads SESSION/layer-index (only when owned by the
// caller), builds what is missing or stale, and writes the file again when
// anything changed (best effort). Run it where the layers are readable (the
// owner user namespace).
std::vector<std::shared_ptr<const LayerIndex>> index_layers(int session_dirfd, const std::vector<int>& frozen_fds);

}  // namespace capture
