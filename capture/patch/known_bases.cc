#include "capture/patch/known_bases.h"

#include "helper/store/known_bases.h"

namespace capture {

base::Result<void> remember_bases(const std::string& session_dir, const Manifest& m) {
    session::KnownBases fresh;
    for (const auto& b : m.base)
        if (!b.absent && !b.stale && !b.fingerprint.empty() && (b.type == Type::File || b.type == Type::Symlink))
            fresh[b.path].insert(session::known_content(b.fingerprint, b.mode));
    return session::add_known_bases(session_dir, fresh);
}

}  // namespace capture
