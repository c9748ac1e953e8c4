#include "capture/scan/session_scan.h"

#include <fcntl.h>

#include "capture/scan/scan.h"
#include "helper/base/text.h"
#include "helper/store/owner_ns.h"

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

base::Result<std::vector<Change>> session_changes_as_owner(const session::Info& s, bool summary_only,
                                                           std::vector<std::string>* excluded_seen) {
    std::vector<Change> out;
    TRY_VOID(as_owner_here([&]() -> base::Result<void> {
        TRY(SessionTrees t, open_session_trees(s));
        ScanOptions so;
        so.session_start_ns = s.meta.created_ns;
        so.excluded = s.meta.hidden;
        so.summary_only = summary_only;
        TRY(ScanResult scan, scan_upper(t.upper.get(), t.lower.get(), so));
        out.reserve(scan.items.size());
        for (auto& it : scan.items) out.push_back(std::move(it.change));
        if (excluded_seen) *excluded_seen = std::move(scan.excluded_seen);
        return base::Ok();
    }));
    return out;
}

}  // namespace capture
