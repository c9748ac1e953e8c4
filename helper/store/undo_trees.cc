#include "helper/store/undo_trees.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "helper/base/fd.h"

namespace session {

namespace {

// ~64,000 trees of 256 bytes. A longer list (appends never check) is read
// as far as this: the stores listed first stay hidden, where failing to read
// it at all hid none.
constexpr size_t kMax = size_t{16} << 20;

constexpr std::string_view kName = "/.layover-undo";

std::string list_file(const std::string& state) { return state + "/undo-trees"; }

// The list's text, at most kMax bytes of it ("" when there is none).
std::string read_list(const std::string& state) {
    auto fd = base::open_at(AT_FDCWD, list_file(state), O_RDONLY | O_NOFOLLOW);
    struct stat st;
    if (!fd || ::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
    return base::read_upto(fd->get(), std::min<size_t>(static_cast<size_t>(st.st_size), kMax));
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

}  // namespace

std::vector<std::string> tree_stores(const std::string& state) { return entries_of(read_list(state)); }

void note_tree_store(const std::string& state, const std::string& store_dir) {
    std::string text = read_list(state);
    auto known = entries_of(text);
    if (std::find(known.begin(), known.end(), store_dir) != known.end()) return;
    auto fd = base::open_at(AT_FDCWD, list_file(state), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
    if (!fd) return;
    // After a cut-off entry, a NUL first: that one stays apart, and dropped.
    std::string entry = (text.empty() || text.back() == '\0' ? "" : std::string(1, '\0')) + store_dir + '\0';
    (void)base::write_all(fd->get(), entry.data(), entry.size());
}

}  // namespace session
