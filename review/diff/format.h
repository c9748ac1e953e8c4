// git-format rendering of one file's change (pure): headers, modes, hunks,
// binary notices, and git's path quoting, so `git apply` parses the output.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace review {

constexpr uint32_t kGitRegular = 0100644, kGitExec = 0100755, kGitSymlink = 0120000;

// One side of a file-level change, as git models it: a regular file or a
// symlink (its target as content), or nothing.
struct Side {
    bool exists = false;
    uint32_t mode = 0;   // kGitRegular, kGitExec or kGitSymlink
    std::string data;    // content or link target (when loaded)
    bool loaded = true;  // false: too big to hold; shown as binary
    uint64_t size = 0;   // logical size
    // data is a window of a big file (review/diff/trim.h): first_line lines
    // come before it, identical on both sides.
    bool window = false;
    uint64_t first_line = 0;
    uint32_t perm = 0;  // a real file's permission bits (07777; read_real_side)
};

struct FileDiff {
    std::string path;  // raw bytes, relative to the target
    Side old_side, new_side;
};

struct Style {
    bool color = false;   // git's default colors
    bool escape = false;  // terminal: make control characters in content visible
    int context = 3;
    bool hunk_numbers = false;  // "@@ ... @@ hunk N": the numbers apply --hunks takes
};

// What --stat and --name-status need from a rendered file.
struct FileStat {
    std::string path;
    char status = 'M';  // A, D, M, T as git's --name-status
    bool binary = false;
    uint64_t added = 0, deleted = 0;      // lines (text)
    uint64_t old_size = 0, new_size = 0;  // bytes (binary)
};

// git's mode for permission bits of a regular file (only u+x matters).
uint32_t git_file_mode(uint32_t perm);

// git's C-style quoting with core.quotePath on: the name unchanged when it
// needs none, else in double quotes with \t, \n, \", \\ and octal escapes.
std::string git_quote(std::string_view name);
// prefix+name quoted as one (e.g. "a/" + name), as git's headers do.
std::string git_quote_two(std::string_view prefix, std::string_view name);

// Control characters (C0, DEL, C1) and invalid UTF-8 made visible, for a
// terminal: ^[ ^? \u009b \xff. Tabs are kept.
std::string terminal_safe(std::string_view s);

// The diff of one file (possibly two diffs for a type change, as git does);
// empty when git would show nothing. Fills *stat when given.
std::string render_file(const FileDiff& f, const Style& style, FileStat* stat = nullptr);

// True when git would call this content binary (a NUL in the first 8000 bytes).
bool looks_binary(std::string_view data);

}  // namespace review
