#include "capture/session_scan.h"

#include <dirent.h>
#include <fcntl.h>

#include <cstring>

#include "capture/owner_ns.h"
#include "capture/scan.h"
#include "helper/base/text.h"

namespace capture {

base::Result<SessionTrees> open_session_trees(const session::Info& s) {
    SessionTrees t;
    auto up = base::open_at(AT_FDCWD, session::upper_dir(s.dir), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (!up) return base::error("session '" + s.meta.name + "' has no readable upper layer: " + up.error().message);
    auto low = base::open_at(AT_FDCWD, s.meta.target, O_RDONLY | O_DIRECTORY);
    if (!low)
        return base::error("the session's target " + s.meta.target + " cannot be opened: " + low.error().message +
                           "; restore it, or discard the session");
    t.upper = std::move(up.value());
    t.lower = std::move(low.value());
    return t;
}

namespace {

// A compact binary form for handing changes from the walk's child process
// back to the caller: JSON was most of the cost of `status` on large trees.
void put_u64(std::string* out, uint64_t v) { out->append(reinterpret_cast<const char*>(&v), sizeof v); }
void put_str(std::string* out, const std::string& s) {
    put_u64(out, s.size());
    out->append(s);
}

struct Cursor {
    const std::string& s;
    size_t pos = 0;
    bool ok = true;
    uint64_t u64() {
        uint64_t v = 0;
        if (pos + sizeof v > s.size()) {
            ok = false;
            return 0;
        }
        std::memcpy(&v, s.data() + pos, sizeof v);
        pos += sizeof v;
        return v;
    }
    std::string str() {
        uint64_t n = u64();
        if (!ok || n > s.size() - pos) {
            ok = false;
            return "";
        }
        std::string out = s.substr(pos, n);
        pos += n;
        return out;
    }
};

std::string encode(const std::vector<Item>& items) {
    std::string out;
    for (const auto& it : items) {
        const Change& c = it.change;
        put_str(&out, c.path);
        put_u64(&out, static_cast<uint64_t>(c.kind));
        put_u64(&out, static_cast<uint64_t>(c.type));
        put_u64(&out, c.size);
        put_u64(&out, c.mode);
        put_u64(&out, static_cast<uint64_t>(c.old_type));
        put_u64(&out, c.old_mode);
        put_str(&out, c.link_target);
        put_u64(&out, c.captured ? 1 : 0);
        put_u64(&out, static_cast<uint64_t>(c.mtime_ns));
    }
    return out;
}

base::Result<std::vector<Change>> decode(const std::string& s) {
    std::vector<Change> out;
    Cursor cur{s};
    while (cur.ok && cur.pos < s.size()) {
        Change c;
        c.path = cur.str();
        c.kind = static_cast<Kind>(cur.u64());
        c.type = static_cast<Type>(cur.u64());
        c.size = cur.u64();
        c.mode = static_cast<uint32_t>(cur.u64());
        c.old_type = static_cast<Type>(cur.u64());
        c.old_mode = static_cast<uint32_t>(cur.u64());
        c.link_target = cur.str();
        c.captured = cur.u64() != 0;
        c.mtime_ns = static_cast<int64_t>(cur.u64());
        out.push_back(std::move(c));
    }
    if (!cur.ok) return base::error("internal error: bad change list from the capture process");
    return out;
}

}  // namespace

base::Result<std::vector<Change>> session_changes(const session::Info& s) {
    TRY(std::string data, in_owner_ns([&]() -> base::Result<std::string> {
        TRY(SessionTrees t, open_session_trees(s));
        ScanOptions so;
        so.session_start_ns = s.meta.created_ns;
        TRY(ScanResult scan, scan_upper(t.upper.get(), t.lower.get(), so));
        return encode(scan.items);
    }));
    return decode(data);
}

}  // namespace capture
