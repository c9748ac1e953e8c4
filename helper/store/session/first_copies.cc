#include "helper/store/session/first_copies.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <system_error>

#include "helper/base/fd.h"
#include "helper/base/text.h"
#include "helper/store/session/session.h"

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

// Digits only (unsigned: no sign), within int64; -1 otherwise.
int64_t parse_ns(std::string_view digits) {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || v > uint64_t{INT64_MAX})
        return -1;
    return static_cast<int64_t>(v);
}

// Every whole line of the notes: births into `born`, names made into `moves`.
void parse(const std::string& text, std::map<std::string, int64_t>* born, Moves* moves) {
    size_t at = 0;
    int64_t since = -1;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) break;  // a line cut short: not whole
        std::string_view line(text.data() + at, end - at);
        at = end + 1;
        if (line == "full") {
            if (moves) moves->full = true;
            continue;
        }
        size_t sp = line.find(' ');
        if (sp == std::string_view::npos) continue;
        std::string_view head = line.substr(0, sp), rest = line.substr(sp + 1);
        if (head == "moves") {
            int64_t ns = parse_ns(rest);
            if (ns >= 0 && (since < 0 || ns < since)) since = ns;
            continue;
        }
        std::string path;
        if (!base::from_hex(rest, &path) || path.empty()) continue;
        if (head == "to") {
            if (moves) moves->made.insert(std::move(path));
            continue;
        }
        int64_t ns = parse_ns(head);
        if (ns < 0 || !born) continue;
        auto [it, fresh] = born->emplace(path, ns);
        if (!fresh && ns < it->second) it->second = ns;
    }
    if (moves) moves->since = since;
}

}  // namespace

Notes::Notes(const std::string& dir)
    : fd_(::open((dir + kFile).c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) {
    struct stat st {};
    if (fd_.valid() && (::fstat(fd_.get(), &st) != 0 || !S_ISREG(st.st_mode))) fd_.reset();
    size_ = st.st_size;  // (one already past 8 MiB gets its "full" at the first line)
}

// One line, in one write: O_APPEND keeps lines whole; one cut short (the
// disk full) is taken back, else the next line would join it and not
// parse. Only this run's supervisor writes the file while it runs: the
// size is kept here.
bool Notes::append(const std::string& line) {
    if (full_) return true;
    if (!fd_.valid()) return false;
    bool last = size_ + static_cast<int64_t>(line.size()) > kMaxBytes;
    const std::string text = last ? std::string("full\n") : line;
    if (!base::write_all(fd_.get(), text.data(), text.size()).ok()) {
        (void)::ftruncate(fd_.get(), size_);
        return false;
    }
    size_ += static_cast<int64_t>(text.size());
    full_ = last;
    return true;
}

bool Notes::first_copy(const std::string& path, int64_t born_ns) {
    return append(std::to_string(born_ns) + " " + base::to_hex(path) + "\n");
}

bool Notes::moves_begin(int64_t now_ns) { return append("moves " + std::to_string(now_ns) + "\n"); }

bool Notes::moved_to(const std::string& path) { return append("to " + base::to_hex(path) + "\n"); }

namespace {

std::string unnoted_lines(int64_t since_ns) { return "moves " + std::to_string(since_ns) + "\nfull\n"; }

}  // namespace

void copy_first_copies(const std::string& from, const std::string& to) {
    std::string text = read_notes(from);
    auto meta = read_meta(from);
    if (meta && unnoted_since(meta.value()) >= 0) text += unnoted_lines(unnoted_since(meta.value()));
    if (text.empty()) return;
    base::Fd out(::open((to + kFile).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (out.valid()) (void)base::write_all(out.get(), text.data(), text.size());
}

void mark_unnoted(const std::string& dir, int64_t since_ns) {
    base::Fd out(::open((dir + kFile).c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    const std::string text = unnoted_lines(since_ns);
    if (out.valid()) (void)base::write_all(out.get(), text.data(), text.size());
}

std::map<std::string, int64_t> read_first_copies(const std::string& dir) {
    std::map<std::string, int64_t> out;
    parse(read_notes(dir), &out, nullptr);
    return out;
}

Moves read_moves(const std::string& dir) {
    Moves out;
    parse(read_notes(dir), nullptr, &out);
    return out;
}

void FirstCopiesOnce::read() const {
    std::call_once(
        once_, [this] { parse(read_notes(dir_) + (unnoted_ >= 0 ? unnoted_lines(unnoted_) : ""), &noted_, &moves_); });
}

int64_t FirstCopiesOnce::get(const std::string& path) const {
    read();
    auto it = noted_.find(path);
    return it == noted_.end() ? -1 : it->second;
}

int64_t FirstCopiesOnce::moves_since() const {
    read();
    return moves_.since;
}

bool FirstCopiesOnce::full() const {
    read();
    return moves_.full;
}

bool FirstCopiesOnce::moved_under(const std::string& path) const {
    read();
    for (size_t cut = path.size(); cut != std::string::npos && cut > 0; cut = path.rfind('/', cut - 1))
        if (moves_.made.count(path.substr(0, cut))) return true;
    return false;
}

}  // namespace session
