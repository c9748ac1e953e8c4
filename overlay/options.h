// Pure helpers for overlayfs mount options (unit-tested).
#pragma once
#include <string>
#include <vector>

namespace overlay {

// Escape a path for an overlayfs option value: ',' separates options and
// ':' separates lower layers, and overlayfs unescapes '\' before either.
std::string escape_option_value(const std::string& path);

// "lowerdir=L,upperdir=U,workdir=W,userxattr,volatile": userxattr because an
// unprivileged mounter cannot write trusted.* xattrs; volatile because without
// it unmounting syncs the whole filesystem holding the upper layer (153 ms
// measured with 256 MiB of unrelated dirty data, 4 ms with volatile).
std::string overlay_options(const std::string& lower, const std::string& upper, const std::string& work);
// The same over a stack of lower layers, topmost first (a session's frozen
// steps over the target): "lowerdir=L1:L2:...". Each path escaped. xino:
// ",xino=on" too, for a stack with a mask (overlay/mask.h), a tmpfs: without
// it the layers are no longer one filesystem, and the command saw each real
// file on a device of its own, apart from its dirs (du -x left them out),
// and the dirs with inode numbers made up.
std::string overlay_options(const std::vector<std::string>& lowers, const std::string& upper, const std::string& work,
                            bool xino = false);
// A read-only overlay of lower layers only (--home ro's masked roots): no
// upper or work dir, no volatile; "lowerdir=MASK:REAL,userxattr,xino=on".
std::string read_only_options(const std::vector<std::string>& lowers);

// Parse a size like "512M", "2G", "1048576", "10%" (of total RAM). Returns
// false on malformed input. total_ram is used for percentages.
bool parse_size(const std::string& text, unsigned long long total_ram, unsigned long long* out);

// Default private tmpfs size: 25% of RAM, capped at 2 GiB.
unsigned long long default_tmp_size(unsigned long long total_ram);

// The private tmpfs's inode count for its size: one per 8 KiB, the kernel's
// own ratio to RAM (half its pages), at least kMinTmpInodes. An empty file
// takes no page of the size, only kernel memory (~1 KB with its dentry): at
// the kernel's default (from RAM, not from the size) a command held ~1 GB
// more than --tmp-size in a million empty files (attack38).
constexpr unsigned long long kTmpBytesPerInode = 8192;
constexpr unsigned long long kMinTmpInodes = 1024;
unsigned long long tmp_inodes(unsigned long long tmp_size);

}  // namespace overlay
