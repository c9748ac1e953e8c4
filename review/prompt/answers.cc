#include "review/prompt/answers.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "capture/scan/entry/fingerprint.h"
#include "helper/base/fd.h"
#include "helper/base/text.h"

namespace review {

namespace {

constexpr const char* kHeader = "layover-apply-p-answers 1\n";
constexpr size_t kMaxFile = 64u << 20;

void field(std::string& out, std::string_view s) {
    out += std::to_string(s.size());
    out += ':';
    out.append(s);
}

std::string dir_of(const std::string& file) { return file.substr(0, file.rfind('/')); }

}  // namespace

std::string hunk_key(std::string_view path, std::string_view body, size_t nth) {
    std::string s = "hunk\n";
    field(s, path);
    field(s, body);
    field(s, std::to_string(nth));
    return capture::fingerprint_bytes(s);
}

std::string change_key(const capture::Change& c, std::string_view content) {
    std::string s = "change\n";
    field(s, c.path);
    field(s, content);
    for (uint64_t v :
         {static_cast<uint64_t>(c.kind), static_cast<uint64_t>(c.type), static_cast<uint64_t>(c.old_type), c.size,
          static_cast<uint64_t>(c.mode), static_cast<uint64_t>(c.old_mode), static_cast<uint64_t>(c.mtime_ns)})
        field(s, std::to_string(v));
    field(s, c.link_target);
    for (const auto& [k, v] : c.xattrs) {
        field(s, k);
        field(s, v);
    }
    return capture::fingerprint_bytes(s);
}

std::string answers_file(const std::string& state_dir, std::string_view source, std::string_view target) {
    std::string s;
    field(s, source);
    field(s, target);
    return state_dir + "/apply-p/" + capture::fingerprint_bytes(s);
}

base::Result<Answers> load_answers(const std::string& file) {
    Answers a;
    base::Fd fd(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
        if (errno == ENOENT) return a;
        return base::sys_error("open " + base::display_path(file));
    }
    TRY(std::string text, base::read_all(fd.get(), kMaxFile));
    if (!std::string_view(text).starts_with(kHeader))
        return base::error("not an answers file: " + base::display_path(file));
    // One answer a line: KEY, a tab, the answer in hex.
    for (size_t pos = std::strlen(kHeader); pos < text.size();) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) return base::error("cut off: " + base::display_path(file));
        std::string_view line(text.data() + pos, nl - pos);
        size_t tab = line.find('\t');
        std::string value;
        if (tab == std::string_view::npos || !base::from_hex(line.substr(tab + 1), &value) || value.empty())
            return base::error("a damaged line in " + base::display_path(file));
        if (line.substr(0, tab) == "owner") a.owner = std::move(value);
        else a.given[std::string(line.substr(0, tab))] = std::move(value);
        pos = nl + 1;
    }
    return a;
}

base::Result<void> save_answers(const std::string& file, const Answers& a) {
    std::string dir = dir_of(file);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return base::sys_error("mkdir " + base::display_path(dir));
    std::string text = kHeader;
    if (!a.owner.empty()) text += "owner\t" + base::to_hex(a.owner) + "\n";
    for (const auto& [k, v] : a.given) text += k + "\t" + base::to_hex(v) + "\n";
    std::string tmp = file + ".tmp" + std::to_string(::getpid());
    base::Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) return base::sys_error("create " + base::display_path(tmp));
    auto w = base::write_all(fd.get(), text.data(), text.size());
    if (w.ok() && ::rename(tmp.c_str(), file.c_str()) != 0) w = base::sys_error("rename " + base::display_path(tmp));
    if (!w.ok()) ::unlink(tmp.c_str());
    return w;
}

namespace {

// STATE/apply-p itself, never through a symlink, and ours (attack26: gc
// followed a symlink there and removed another dir's files).
base::Fd open_answers_dir(const std::string& dir) {
    base::Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (fd.valid() && (::fstat(fd.get(), &st) != 0 || st.st_uid != ::geteuid())) fd.reset(-1);
    return fd;
}

}  // namespace

int drop_answers(const std::string& file) {
    auto slash = file.rfind('/');
    if (slash == std::string::npos) return EINVAL;
    base::Fd dir = open_answers_dir(file.substr(0, slash));
    if (!dir.valid()) return errno == ENOENT ? ENOENT : ENOTDIR;
    return ::unlinkat(dir.get(), file.c_str() + slash + 1, 0) == 0 ? 0 : errno;
}

std::vector<KeptAnswersFile> list_kept_answers(const std::string& state_dir) {
    std::vector<KeptAnswersFile> out;
    std::string dir = state_dir + "/apply-p";
    base::Fd fd = open_answers_dir(dir);
    if (!fd.valid()) return out;
    int dfd = fd.get();
    int dup = ::dup(dfd);
    DIR* d = dup < 0 ? nullptr : ::fdopendir(dup);
    if (!d) {
        if (dup >= 0) ::close(dup);
        return out;
    }
    while (struct dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        KeptAnswersFile k;
        k.file = dir + "/" + name;
        struct stat st {};
        if (::fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        k.mtime_s = st.st_mtime;
        k.bytes = static_cast<uint64_t>(st.st_size);
        k.temporary = name.find(".tmp") != std::string::npos;
        if (!k.temporary) {
            auto a = load_answers(k.file);
            k.readable = a.ok();
            if (a.ok()) k.owner = std::move(a->owner);
        }
        out.push_back(std::move(k));
    }
    ::closedir(d);
    return out;
}

void drop_answers_of(const std::string& state_dir, const std::string& owner) {
    for (const auto& k : list_kept_answers(state_dir))
        if (k.readable && k.owner == owner) drop_answers(k.file);
}

}  // namespace review
