// Pure rules for patch member names: validation (no absolute paths, no "..",
// no empty or "." components) and the OCI whiteout naming.
#pragma once
#include <cstdint>
#include <string>

namespace capture {

// "" when name is a valid relative path of at most max_len bytes; otherwise why not.
std::string check_relative_path(const std::string& name, uint64_t max_len);

enum class NameRole { Plain, Whiteout, Opaque, Reserved };

// What a member name means: DIR/.wh.NAME deletes DIR/NAME, DIR/.wh..wh..opq
// makes DIR opaque; other .wh..wh.* names are reserved. *path gets the path
// the member is about (the deleted path, or the opaque dir).
NameRole name_role(const std::string& name, std::string* path);

// The member name that deletes `path` (DIR/.wh.NAME), or marks dir opaque.
std::string whiteout_name(const std::string& path);
std::string opaque_name(const std::string& dir);

}  // namespace capture

namespace capture {

// An xattr name as libarchive's pax writer puts it in the keys of both its
// records (URL-encoded: '%', '=' and bytes outside 0x21..0x7e become %XX).
// Its reader decodes the LIBARCHIVE.xattr copy but not the SCHILY.xattr one,
// so a reader sees a name n and, when they differ, xattr_key_encode(n) too.
std::string xattr_key_encode(const std::string& name);

}  // namespace capture
