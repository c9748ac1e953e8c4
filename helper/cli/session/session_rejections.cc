#include "helper/cli/session/session_rejections.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <memory>

#include "capture/scan/walk/session_scan.h"
#include "helper/base/json/writer.h"
#include "helper/base/text.h"
#include "helper/store/layers/layers.h"
#include "review/diff/source.h"

namespace {

constexpr uint64_t kMaxLoad = 64ull << 20;  // as `layover diff` loads

// rel as the session's stack shows it (the live upper over the frozen
// steps, docs/history.md): the topmost layer holding each component decides,
// whiteouts and opaque dirs hide what lies below. Absent: an empty Side.
base::Result<review::Side> stack_side(const capture::SessionTrees& t, const std::string& rel) {
    layers::Chain chain;
    for (int fd : t.layers()) {
        int d = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (d < 0) return base::sys_error("dup");
        chain.fds.emplace_back(d);
    }
    size_t at = 0;
    for (;;) {
        size_t slash = rel.find('/', at);
        std::string name = rel.substr(at, slash == std::string::npos ? std::string::npos : slash - at);
        TRY(layers::Found f, layers::lookup(chain, name));
        if (!f.exists) return review::Side{};
        if (slash == std::string::npos) return review::read_real_side(chain.fds[f.layer].get(), name, kMaxLoad);
        if (!S_ISDIR(f.st.st_mode)) return review::Side{};
        chain = std::move(f.sub);
        at = slash + 1;
    }
}

}  // namespace

base::Result<SessionSides> session_sides(const session::Info& info) {
    TRY(auto trees, capture::open_session_trees(info));
    return sides_of(std::make_shared<capture::SessionTrees>(std::move(trees)));
}

SessionSides sides_of(std::shared_ptr<capture::SessionTrees> held) {
    SessionSides s;
    s.session_side = [held](const std::string& p) { return stack_side(*held, p); };
    s.real_side = [held](const std::string& p) { return review::read_real_side(held->lower.get(), p, kMaxLoad); };
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
