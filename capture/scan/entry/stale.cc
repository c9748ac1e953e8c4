#include "capture/scan/entry/stale.h"

namespace capture {

bool stale_copy(const std::string& path, int64_t real_ctime_ns, int64_t copied_ns, uint32_t mode,
                const session::KnownBasesOnce* once, const std::function<std::string()>& fingerprint) {
    // An equal stamp may be a change after the copy: both come from the
    // kernel's coarse clock (one tick: 4 ms at HZ=250), and a host edit just
    // after a run's copy (a script's next line) shared its tick and was
    // silently overwritten. Equal counts as changed unless the content is
    // known: the run's exit vouches for a copy's real file at equal stamps
    // (Walker::note_fresh), so one changed just before the copy-up is no
    // conflict, while one changed after that exit is.
    if (real_ctime_ns < copied_ns) return false;
    const session::KnownBases* known = once ? once->get() : nullptr;
    if (!known) return true;
    auto k = known->find(path);
    if (k == known->end()) return true;
    std::string fp = fingerprint();
    return fp.empty() || !(k->second.count(fp) || k->second.count(session::known_content(fp, mode)));
}

}  // namespace capture
