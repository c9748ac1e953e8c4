#include "helper/store/records/undo_trees.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "helper/base/dir.h"
#include "helper/base/fd.h"

namespace session {

namespace {

// ~64,000 trees of 256 bytes. A longer list (appends never check) is read
// as far as this: the stores listed first stay hidden, where failing to read
// it at all hid none.
constexpr size_t kMax = size_t{16} << 20;
// What a rewrite reads: the stores listed past it were never read (hidden)
// anyway; a corrupt list of any size (a sparse terabyte) was read whole,
// std::bad_alloc out of apply (attack52).
constexpr size_t kRewriteMax = 4 * kMax;

constexpr std::string_view kName = "/.layover-undo";

std::string list_file(const std::string& state) { return state + "/undo-trees"; }

// The list's text from fd, at most `max` bytes of it ("" when it is no
// regular file); *whole: nothing was left unread.
std::string read_fd(int fd, size_t max, bool* whole = nullptr) {
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return "";
    if (whole) *whole = static_cast<uint64_t>(st.st_size) <= max;
    return base::read_upto(fd, std::min<size_t>(static_cast<size_t>(st.st_size), max));
}

// The list's text, at most kMax bytes of it ("" when there is none).
std::string read_list(const std::string& state) {
    auto fd = base::open_at(AT_FDCWD, list_file(state), O_RDONLY | O_NOFOLLOW);
    return fd ? read_fd(fd->get(), kMax) : "";
}

// Each listed store once, in the order added. A set finds the repeats: with
// thousands of trees, comparing each entry with all before it cost every
// run tens of milliseconds.
std::vector<std::string> entries_of(const std::string& text) {
    std::vector<std::string> out;
    std::unordered_set<std::string_view> seen;
    size_t i = 0;
    while (i < text.size()) {
        size_t j = text.find('\0', i);
        if (j == std::string::npos) break;  // a cut-off last entry (a crash mid-append)
        std::string_view p(text.data() + i, j - i);
        // Only a store's own name: a cut-off entry could name its tree.
        bool store = p.size() > kName.size() && p[0] == '/' && p.substr(p.size() - kName.size()) == kName;
        if (store && seen.insert(p).second) out.emplace_back(p);
        i = j + 1;
    }
    return out;
}

// The list, open for appends and locked (flock), so that an append never
// lands in a list being rewritten; an invalid Fd when it cannot be had.
base::Fd lock_list(const std::string& state) {
    for (int tries = 0; tries < 10; tries++) {
        auto fd = base::open_at(AT_FDCWD, list_file(state), O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
        if (!fd || ::flock(fd->get(), LOCK_EX) != 0) return {};
        struct stat held, now;
        if (::fstat(fd->get(), &held) == 0 && ::lstat(list_file(state).c_str(), &now) == 0 &&
            held.st_dev == now.st_dev && held.st_ino == now.st_ino)
            return std::move(fd.value());
        // Replaced by a rewrite while we waited: the new one is the list.
    }
    return {};
}

}  // namespace

std::vector<std::string> tree_stores(const std::string& state) { return entries_of(read_list(state)); }

void note_tree_store(const std::string& state, const std::string& store_dir) {
    base::Fd fd = lock_list(state);
    if (!fd.valid()) return;
    bool whole = true;
    std::string text = read_fd(fd.get(), kMax, &whole);
    auto known = entries_of(text);
    if (std::find(known.begin(), known.end(), store_dir) != known.end()) return;
    if (!whole) {
        // Past kMax an appended store would never be read (attack51): the
        // list is written again with the listed stores that still exist,
        // then this one (a store gone is listed again by the next apply
        // that makes it).
        ::lseek(fd.get(), 0, SEEK_SET);
        std::string all = read_fd(fd.get(), kRewriteMax), kept;
        for (const auto& e : entries_of(all))
            if (e != store_dir && base::is_real_dir(e)) kept.append(e).push_back('\0');
        kept.append(store_dir).push_back('\0');
        std::string tmp = list_file(state) + ".new";
        auto out = base::open_at(AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
        if (out && base::write_all(out->get(), kept.data(), kept.size()) && ::fsync(out->get()) == 0 &&
            ::rename(tmp.c_str(), list_file(state).c_str()) == 0)
            return;
        ::unlink(tmp.c_str());  // then appended, as before
    }
    // After a cut-off entry, a NUL first: that one stays apart, and dropped.
    std::string entry = (text.empty() || text.back() == '\0' ? "" : std::string(1, '\0')) + store_dir + '\0';
    (void)base::write_all(fd.get(), entry.data(), entry.size());
}

}  // namespace session
