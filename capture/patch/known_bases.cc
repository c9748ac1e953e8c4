#include "capture/patch/known_bases.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include "capture/patch/manifest.h"
#include "helper/base/fd.h"

namespace capture {
namespace {

constexpr size_t kMaxFile = size_t(1) << 30;  // the manifest reader's own bound applies too

bool fresh(const BaseEntry& b) {
    return !b.absent && !b.stale && !b.fingerprint.empty() && (b.type == Type::File || b.type == Type::Symlink);
}

}  // namespace

base::Result<std::vector<BaseEntry>> known_bases(const std::string& session_dir) {
    std::string path = session_dir + "/bases.json";
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return std::vector<BaseEntry>{};
        return base::sys_error("reading " + path);
    }
    base::Fd owned(fd);
    TRY(std::string text, base::read_all(fd, kMaxFile));
    auto m = manifest_from_text(text);
    if (!m) return m.error().context(path);
    return std::move(m->base);
}

base::Result<void> remember_bases(const std::string& session_dir, const Manifest& m) {
    std::map<std::string, BaseEntry> merged;
    if (auto old = known_bases(session_dir)) {
        for (auto& b : *old) merged[b.path] = std::move(b);
    }  // an unreadable file is replaced: the records only ever clear a conflict
    for (const auto& b : m.base)
        if (fresh(b)) merged[b.path] = b;
    Manifest out;
    out.format = "layover-patch/1";
    out.target = m.target;
    out.session = m.session;
    out.created = m.created;
    out.version = m.version;
    for (auto& [path, b] : merged) out.base.push_back(std::move(b));
    std::string text = manifest_to_text(out);
    std::string tmp = session_dir + "/.bases.json.tmp";
    TRY(base::Fd fd, base::open_at(AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600));
    TRY_VOID(base::write_all(fd.get(), text.data(), text.size()));
    TRY_VOID(fd.close());
    if (::rename(tmp.c_str(), (session_dir + "/bases.json").c_str()) != 0)
        return base::sys_error("keeping the base records in " + session_dir);
    return base::Ok();
}

size_t clear_known_stale(std::vector<BaseEntry>* base, const std::vector<BaseEntry>& known) {
    if (known.empty()) return 0;
    std::map<std::string_view, const BaseEntry*> by_path;
    for (const auto& k : known)
        if (fresh(k)) by_path[k.path] = &k;
    size_t cleared = 0;
    for (auto& b : *base) {
        if (!b.stale || b.absent) continue;
        auto it = by_path.find(b.path);
        if (it == by_path.end()) continue;
        const BaseEntry& k = *it->second;
        if (k.type == b.type && k.size == b.size && (k.mode & 07777) == (b.mode & 07777) &&
            k.fingerprint == b.fingerprint) {
            b.stale = false;
            ++cleared;
        }
    }
    return cleared;
}

}  // namespace capture
