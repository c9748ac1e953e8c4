#include "helper/cli/session_rejections.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>

#include "capture/scan/session_scan.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/json/writer.h"
#include "helper/base/text.h"

namespace {

constexpr uint64_t kMaxLoad = 64ull << 20;  // as `layover diff` loads

// review::read_real_side's rule, without the patch reader `layover` does not
// link: a regular file or a symlink beneath `root` exists; anything else not.
base::Result<review::Side> side_beneath(int root, const std::string& rel) {
    review::Side side;
    auto fd = review::open_beneath(root, rel, O_PATH | O_NOFOLLOW);
    if (!fd) {
        int e = fd.error().code;
        if (e == ENOENT || e == ENOTDIR || e == ELOOP || e == EXDEV) return side;
        return fd.error();
    }
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) return base::sys_error("stat " + base::display_path(rel));
    if (S_ISLNK(st.st_mode)) {
        std::string buf(static_cast<size_t>(st.st_size) + 1, '\0');
        ssize_t n = ::readlinkat(fd->get(), "", buf.data(), buf.size());
        if (n < 0) return base::sys_error("reading link " + base::display_path(rel));
        buf.resize(static_cast<size_t>(n));
        side.exists = true;
        side.mode = review::kGitSymlink;
        side.size = buf.size();
        side.data = std::move(buf);
        return side;
    }
    if (!S_ISREG(st.st_mode)) return side;
    side.exists = true;
    side.mode = review::git_file_mode(st.st_mode);
    side.size = static_cast<uint64_t>(st.st_size);
    if (side.size > kMaxLoad) {
        side.loaded = false;
        return side;
    }
    TRY(base::Fd rd, review::open_beneath(root, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
    TRY(side.data, base::read_all(rd.get(), kMaxLoad));
    side.size = side.data.size();
    return side;
}

}  // namespace

base::Result<SessionSides> session_sides(const session::Info& info) {
    TRY(auto trees, capture::open_session_trees(info));
    return sides_of(std::make_shared<capture::SessionTrees>(std::move(trees)));
}

SessionSides sides_of(std::shared_ptr<capture::SessionTrees> held) {
    SessionSides s;
    s.session_side = [held](const std::string& p) { return side_beneath(held->upper.get(), p); };
    s.real_side = [held](const std::string& p) { return side_beneath(held->lower.get(), p); };
    return s;
}

base::Result<std::vector<review::RejectionState>> session_rejections(const session::Info& info,
                                                                     const std::vector<capture::Change>& changes) {
    TRY(auto recs, session::read_rejections(info.dir));
    if (recs.list.empty()) return std::vector<review::RejectionState>{};
    TRY(SessionSides sides, session_sides(info));
    return review::judge_rejections(recs.list, changes, sides.session_side, sides.real_side);
}

std::string rejection_json(const review::RejectionState& s) {
    using namespace base::json;
    std::string o = "{";
    key(&o, "seq");
    num(&o, s.rec.seq);
    o += ", ";
    field_bytes(&o, "path", s.rec.path);
    o += ", ";
    key(&o, "hunk");
    num(&o, s.rec.hunk);
    o += ", ";
    key(&o, "hunk_now");
    num(&o, s.in_force ? s.hunk_now : 0);
    o += ", ";
    key(&o, "reason");
    str(&o, s.rec.reason);
    o += ", ";
    key(&o, "time");
    str(&o, s.rec.time);
    o += ", ";
    key(&o, "state");
    str(&o, s.in_force ? "rejected" : "superseded");
    if (!s.in_force) {
        o += ", ";
        key(&o, "why");
        str(&o, s.why);
    }
    return o + "}";
}

bool has_rejections(const session::Info& info) {
    auto r = session::read_rejections(info.dir);
    return !r || !r->list.empty();  // a malformed file: judged, so that its error shows
}

std::string rejected_field(const std::vector<review::RejectionState>& all, const std::string& path) {
    std::string o = ", \"rejected\": [";
    bool first = true;
    for (const auto& s : all) {
        if (!s.in_force || s.rec.path != path) continue;
        o += first ? "" : ", ";
        first = false;
        o += rejection_json(s);
    }
    return o + "]";
}
