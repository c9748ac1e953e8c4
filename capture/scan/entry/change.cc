#include "capture/scan/entry/change.h"

namespace capture {

const char* kind_name(Kind k) {
    switch (k) {
        case Kind::Added: return "added";
        case Kind::Modified: return "modified";
        case Kind::Deleted: return "deleted";
        case Kind::TypeChanged: return "type_changed";
        case Kind::Metadata: return "metadata";
        case Kind::OpaqueDir: return "opaque_dir";
    }
    return "?";
}

const char* type_name(Type t) {
    switch (t) {
        case Type::None: return "none";
        case Type::File: return "file";
        case Type::Dir: return "dir";
        case Type::Symlink: return "symlink";
        case Type::Fifo: return "fifo";
        case Type::Socket: return "socket";
        case Type::Whiteout: return "whiteout";
        case Type::OpaqueDir: return "opaque_dir";
        case Type::Other: return "other";
    }
    return "?";
}

char kind_letter(Kind k) {
    switch (k) {
        case Kind::Added: return 'A';
        case Kind::Modified: return 'M';
        case Kind::Deleted: return 'D';
        case Kind::TypeChanged: return 'T';
        case Kind::Metadata: return 'm';
        case Kind::OpaqueDir: return 'O';
    }
    return '?';
}

bool parse_kind(const std::string& s, Kind* out) {
    for (Kind k : {Kind::Added, Kind::Modified, Kind::Deleted, Kind::TypeChanged, Kind::Metadata, Kind::OpaqueDir}) {
        if (s == kind_name(k)) {
            *out = k;
            return true;
        }
    }
    return false;
}

bool parse_type(const std::string& s, Type* out) {
    for (Type t : {Type::None, Type::File, Type::Dir, Type::Symlink, Type::Fifo, Type::Socket, Type::Whiteout,
                   Type::OpaqueDir, Type::Other}) {
        if (s == type_name(t)) {
            *out = t;
            return true;
        }
    }
    return false;
}

}  // namespace capture
