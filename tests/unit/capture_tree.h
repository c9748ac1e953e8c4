// Test helpers: synthetic upper/lower trees in a fresh temp dir, with forged
// overlay markers (the xattr whiteout form and opaque=y need no privilege).
#pragma once
#include <string>

namespace testtree {

struct TempDir {
    TempDir();
    ~TempDir();
    std::string path;
};

// Make an entry: "file:CONTENT", "dir", "symlink:TARGET", "fifo", "socket",
// "whiteout" (zero-size file + user.overlay.whiteout), "opaque" (dir + user.overlay.opaque=y).
void make(const std::string& path, const std::string& spec);
void set_xattr(const std::string& path, const std::string& name, const std::string& value);
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);

}  // namespace testtree
