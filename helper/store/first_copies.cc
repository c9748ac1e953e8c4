#include "helper/store/first_copies.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <system_error>

#include "helper/base/fd.h"
#include "helper/base/text.h"

namespace session {

namespace {

constexpr const char* kFile = "/first-copies";
constexpr off_t kMaxBytes = off_t{8} << 20;

// The notes as written (empty when none can be read).
std::string read_notes(const std::string& dir) {
    base::Fd fd(::open((dir + kFile).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) return "";
    auto text = base::read_all(fd.get(), static_cast<size_t>(kMaxBytes) + (1 << 20));
    return text ? std::move(text.value()) : "";
}

}  // namespace

bool note_first_copy(const std::string& dir, const std::string& path, int64_t born_ns) {
    base::Fd fd(::open((dir + kFile).c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMaxBytes) return false;
    std::string line = std::to_string(born_ns) + " " + base::to_hex(path) + "\n";
    // One write: O_APPEND keeps lines whole; one cut short (the disk full)
    // is taken back, else the next line would join it and not parse.
    if (base::write_all(fd.get(), line.data(), line.size())) return true;
    (void)::ftruncate(fd.get(), st.st_size);
    return false;
}

void copy_first_copies(const std::string& from, const std::string& to) {
    std::string text = read_notes(from);
    if (text.empty()) return;
    base::Fd out(::open((to + kFile).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (out.valid()) (void)base::write_all(out.get(), text.data(), text.size());
}

std::map<std::string, int64_t> read_first_copies(const std::string& dir) {
    std::map<std::string, int64_t> out;
    std::string text = read_notes(dir);
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) break;  // a line cut short: not whole
        std::string_view line(text.data() + at, end - at);
        at = end + 1;
        size_t sp = line.find(' ');
        if (sp == std::string_view::npos) continue;
        // Digits only (unsigned: no sign), and within int64.
        uint64_t v = 0;
        auto [end_num, ec] = std::from_chars(line.data(), line.data() + sp, v);
        if (sp == 0 || ec != std::errc() || end_num != line.data() + sp || v > uint64_t{INT64_MAX}) continue;
        int64_t ns = static_cast<int64_t>(v);
        std::string path;
        if (!base::from_hex(line.substr(sp + 1), &path) || path.empty()) continue;
        auto [it, fresh] = out.emplace(path, ns);
        if (!fresh && ns < it->second) it->second = ns;
    }
    return out;
}

int64_t FirstCopiesOnce::get(const std::string& path) const {
    std::call_once(once_, [this] { noted_ = read_first_copies(dir_); });
    auto it = noted_.find(path);
    return it == noted_.end() ? -1 : it->second;
}

}  // namespace session
