// Pure parsing of /proc/self/mountinfo (unit-tested).
#pragma once
#include <string>
#include <vector>

namespace overlay {

struct MountEntry {
    std::string mount_point;  // unescaped (\040 -> space, ...)
    std::string fs_type;
    std::string dev;   // "major:minor" of the filesystem
    std::string root;  // the mounted dir, as a path inside its filesystem
};

std::vector<MountEntry> parse_mountinfo(const std::string& text);

// Mount points strictly below dir (not dir itself), shallowest first, with
// mounts hidden below another listed one dropped (a recursive clone of the
// outer one carries them).
std::vector<std::string> submounts_under(const std::vector<MountEntry>& mounts, const std::string& dir);

// Every other path where the file or dir at `path` (absolute, symlink-free)
// is visible through a mount of the same filesystem whose root holds it: a
// bind mount of a parent, a second mount of the same device. The containing
// mount is the last-mounted one with the longest mount point; callers check
// the candidates' identity (dev, inode) before trusting them.
std::vector<std::string> aliases_of(const std::vector<MountEntry>& mounts, const std::string& path);

// True when path equals dir or lies below it (component-wise, both absolute).
bool path_within(const std::string& path, const std::string& dir);

}  // namespace overlay
