// The change model: what one upper-layer entry means against the lower tree.
// Pure types shared by capture (which produces them), the patch reader, review
// and the JSON output of `status`/`show`.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace capture {

enum class Kind { Added, Modified, Deleted, TypeChanged, Metadata, OpaqueDir };
// Entry types. Whiteout/Opaque only describe upper entries before
// classification; a Change's type/old_type is one of File..Socket or None.
enum class Type { None, File, Dir, Symlink, Fifo, Socket, Whiteout, OpaqueDir, Other };

const char* kind_name(Kind k);  // "added", "modified", ... (JSON names)
const char* type_name(Type t);  // "file", "dir", "symlink", "fifo", "socket", ...
char kind_letter(Kind k);       // A M D T m O: the short status column
bool parse_kind(const std::string& s, Kind* out);
bool parse_type(const std::string& s, Type* out);

struct Change {
    std::string path;  // raw bytes, relative to the target, no leading "./"
    Kind kind = Kind::Added;
    Type type = Type::None;  // new type (None for deletions)
    uint64_t size = 0;       // new logical size (files)
    uint32_t mode = 0;       // new permission bits (07777 masked, never suid/sgid on apply)
    Type old_type = Type::None;
    uint32_t old_mode = 0;
    // The two flags sit in the padding after old_mode: 168 bytes a change,
    // not 184 (fewer pages for status's 10,000 changes and the walk's items).
    bool captured = true;                       // false for sockets: reported, never stored
    bool ignored = false;                       // matched an ignore rule (kept by --include-ignored)
    std::string link_target;                    // new symlink target (raw bytes)
    int64_t mtime_ns = 0;                       // new mtime; apply sets it on changed files
    std::map<std::string, std::string> xattrs;  // user.* xattrs kept (new state)
    uint64_t old_nlink = 0;                     // the real entry's link count, as scanned (not stored)
    uint32_t layer = 0;  // the layer holding the upper entry (scan_layers; 0: the live upper; not stored)
    // status: the verdict cache knows this file's content, at the stats the
    // scan saw, as showing no content risk (capture/scan/caches/verdicts.h; not stored)
    bool risk_free_cached = false;
    // status: what the walk's content reader (ScanOptions::reader) made of
    // the file's text, read as the walk met it (not stored).
    enum class Read : uint8_t { NotRead, Free, Risky, Unreadable };
    Read content_read = Read::NotRead;
    // status: the real entry changed after the sandbox copied it up (a
    // stale copy: apply reports a conflict; capture/scan/entry/stale.h; not stored).
    bool stale = false;
};

// The `base` record: what the real entry must be for a change to apply cleanly.
struct BaseEntry {
    std::string path;     // raw bytes, relative to the target
    bool absent = false;  // the path must not exist
    Type type = Type::None;
    uint64_t size = 0;
    uint32_t mode = 0;
    std::string fingerprint;  // 32 hex chars, XXH3-128 of data (sparse: data segments + hole map) or link target
    bool stale = false;       // the real entry changed after copy-up: always a conflict
};

}  // namespace capture
