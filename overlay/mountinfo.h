// Pure parsing of /proc/self/mountinfo (unit-tested).
#pragma once
#include <string>
#include <vector>

namespace overlay {

struct MountEntry {
    std::string mount_point;  // unescaped (\040 -> space, ...)
    std::string fs_type;
};

std::vector<MountEntry> parse_mountinfo(const std::string& text);

// Mount points strictly below dir (not dir itself), shallowest first, with
// mounts hidden below another listed one dropped (a recursive clone of the
// outer one carries them).
std::vector<std::string> submounts_under(const std::vector<MountEntry>& mounts, const std::string& dir);

// True when path equals dir or lies below it (component-wise, both absolute).
bool path_within(const std::string& path, const std::string& dir);

}  // namespace overlay
