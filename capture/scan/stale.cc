#include "capture/scan/stale.h"

namespace capture {

bool stale_copy(const std::string& path, int64_t real_ctime_ns, int64_t copied_ns, uint32_t mode,
                const session::KnownBasesOnce* once, const std::function<std::string()>& fingerprint) {
    if (real_ctime_ns <= copied_ns) return false;
    const session::KnownBases* known = once ? once->get() : nullptr;
    if (!known) return true;
    auto k = known->find(path);
    if (k == known->end()) return true;
    std::string fp = fingerprint();
    return fp.empty() || !(k->second.count(fp) || k->second.count(session::known_content(fp, mode)));
}

}  // namespace capture
