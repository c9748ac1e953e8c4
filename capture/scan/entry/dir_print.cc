#include "capture/scan/entry/dir_print.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "capture/scan/entry/classify.h"
#include "capture/scan/entry/fingerprint.h"
#include "helper/base/fd.h"

namespace capture {

namespace {

constexpr size_t kMaxEntries = 100000;
constexpr uint64_t kMaxBytes = uint64_t{1} << 30;
// A chain of dirs costs a stack frame and an fd a level, and each entry's
// path repeats its parents': a 3,000-deep chain of 100-byte names took
// 1.4 GB (attack26). Deeper, or longer in all, the dir stays stale.
constexpr size_t kMaxDepth = 512;
constexpr uint64_t kMaxPathBytes = uint64_t{64} << 20;

void field(std::string& out, const std::string& s) {
    out += std::to_string(s.size());
    out += ':';
    out += s;
}

struct Budget {
    size_t entries = 0;
    uint64_t bytes = 0;
    uint64_t path_bytes = 0;
};

// false: unreadable or over budget.
bool walk(int dir_fd, const std::string& prefix, size_t depth, Budget* b, std::vector<SubtreeEntry>* out) {
    if (depth > kMaxDepth) return false;
    int dup = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dup < 0) return false;
    DIR* d = ::fdopendir(dup);
    if (!d) {
        ::close(dup);
        return false;
    }
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n == "." || n == "..") continue;
        // Counted as read: a flat dir of millions is never held whole.
        if (b->entries + names.size() >= kMaxEntries ||
            (b->path_bytes += prefix.size() + 1 + n.size()) > kMaxPathBytes) {
            ::closedir(d);
            return false;
        }
        names.push_back(std::move(n));
    }
    ::closedir(d);
    for (const auto& n : names) {
        if (++b->entries > kMaxEntries) return false;
        struct stat st {};
        if (::fstatat(dir_fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
        SubtreeEntry s;
        s.rel = prefix.empty() ? n : prefix + "/" + n;
        s.type = lower_type(st.st_mode);
        s.mode = s.type == Type::Symlink ? 0 : st.st_mode & 07777;
        if (s.type == Type::File) {
            s.size = static_cast<uint64_t>(st.st_size);
            if ((b->bytes += s.size) > kMaxBytes) return false;
            base::Fd f(::openat(dir_fd, n.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
            if (!f.valid()) return false;
            auto fp = fingerprint_fd(f.get(), s.size);
            if (!fp) return false;
            s.fingerprint = std::move(fp.value());
        } else if (s.type == Type::Symlink) {
            std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
            ssize_t got = ::readlinkat(dir_fd, n.c_str(), target.data(), target.size());
            if (got < 0 || static_cast<size_t>(got) >= target.size()) return false;
            target.resize(static_cast<size_t>(got));
            s.fingerprint = fingerprint_bytes(target);
        }
        std::string rel = s.rel;
        bool is_dir = s.type == Type::Dir;
        out->push_back(std::move(s));
        if (is_dir) {
            base::Fd sub(::openat(dir_fd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!sub.valid() || !walk(sub.get(), rel, depth + 1, b, out)) return false;
        }
    }
    return true;
}

}  // namespace

std::string subtree_fingerprint(uint32_t dir_mode, std::vector<SubtreeEntry> entries) {
    std::sort(entries.begin(), entries.end(),
              [](const SubtreeEntry& a, const SubtreeEntry& b) { return a.rel < b.rel; });
    std::string s = "dir-subtree\n";
    field(s, std::to_string(dir_mode & 07777));
    for (const auto& e : entries) {
        field(s, e.rel);
        field(s, type_name(e.type));
        field(s, std::to_string(e.type == Type::Symlink ? 0 : e.mode & 07777));
        field(s, std::to_string(e.type == Type::File ? e.size : 0));
        field(s, e.type == Type::File || e.type == Type::Symlink ? e.fingerprint : std::string());
    }
    return "dir:" + fingerprint_bytes(s);
}

std::string real_subtree_fingerprint(int dir_fd) {
    struct stat st {};
    if (dir_fd < 0 || ::fstat(dir_fd, &st) != 0 || !S_ISDIR(st.st_mode)) return "";
    Budget b;
    std::vector<SubtreeEntry> entries;
    if (!walk(dir_fd, "", 0, &b, &entries)) return "";
    return subtree_fingerprint(st.st_mode & 07777, std::move(entries));
}

}  // namespace capture
