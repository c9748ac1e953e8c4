#include "capture/scan/entry/xattr.h"

#include <sys/xattr.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "helper/base/text.h"

namespace capture {

namespace {

const std::string kUser = "user.";
const std::string kOvl = "user.overlay.";
const std::string kEscaped = "user.overlay.overlay.";

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

bool needs_value(const std::string& name) {
    if (!starts_with(name, kUser)) return false;
    if (!starts_with(name, kOvl) || starts_with(name, kEscaped)) return true;
    return name.compare(kOvl.size(), std::string::npos, "opaque") == 0;
}

}  // namespace

base::Result<Xattrs> read_xattrs(int fd) {
    Xattrs out;
    // Most entries have no xattrs: ask with a stack buffer first, so the
    // common case allocates nothing.
    char small[512];
    ssize_t got = ::flistxattr(fd, small, sizeof small);
    if (got == 0) return out;
    if (got < 0 && errno == ENOTSUP) return out;
    std::vector<char> names(small, small + std::max<ssize_t>(got, 0));
    while (got < 0) {  // too long for the stack buffer, or an error to report
        if (names.empty()) names.resize(1024);
        ssize_t n = ::flistxattr(fd, names.data(), names.size());
        if (n >= 0) {
            names.resize(static_cast<size_t>(n));
            break;
        }
        if (errno == ENOTSUP) return out;  // the filesystem has no xattrs at all
        if (errno != ERANGE) return base::sys_error("listing xattrs");
        // The list grew between calls: ask for its size again.
        ssize_t need = ::flistxattr(fd, nullptr, 0);
        if (need < 0) return base::sys_error("listing xattrs");
        names.resize(static_cast<size_t>(need) + 256);
    }
    for (size_t i = 0; i < names.size();) {
        std::string name(names.data() + i);
        i += name.size() + 1;
        if (name.empty()) continue;
        // Only user.* values are ever used, and of overlayfs's own markers
        // only opaque's: the others (origin on every copied-up file, impure,
        // whiteout) count by name alone, which saves a syscall per entry.
        if (!needs_value(name)) {
            out[name];
            continue;
        }
        std::string value(256, '\0');
        for (;;) {
            ssize_t n = ::fgetxattr(fd, name.c_str(), value.data(), value.size());
            if (n >= 0) {
                value.resize(static_cast<size_t>(n));
                break;
            }
            if (errno == ENODATA) {  // removed since the listing
                value.clear();
                break;
            }
            if (errno != ERANGE) return base::sys_error("reading xattr " + base::display_path(name));
            ssize_t need = ::fgetxattr(fd, name.c_str(), nullptr, 0);
            if (need < 0) return base::sys_error("reading xattr " + base::display_path(name));
            value.resize(static_cast<size_t>(need) + 64);
        }
        out[name] = value;
    }
    return out;
}

Xattrs user_xattrs(const Xattrs& raw, bool upper_layer) {
    Xattrs out;
    for (const auto& [name, value] : raw) {
        if (!starts_with(name, kUser)) continue;  // security.*, trusted.*, system.*: never captured
        if (starts_with(name, kEscaped)) {
            // Only the upper layer was written through the overlay, which
            // escapes a user's own user.overlay.X as user.overlay.overlay.X.
            if (upper_layer) out[kOvl + name.substr(kEscaped.size())] = value;
            continue;
        }
        if (starts_with(name, kOvl)) continue;  // overlayfs's own markers
        out[name] = value;
    }
    return out;
}

OverlayMarks overlay_marks(const Xattrs& raw) {
    OverlayMarks m;
    for (const auto& [name, value] : raw) {
        if (!starts_with(name, kOvl) || starts_with(name, kEscaped)) continue;
        std::string key = name.substr(kOvl.size());
        if (key == "whiteout") {
            m.whiteout = true;
        } else if (key == "opaque") {
            // ("x" marks a dir holding xattr whiteouts without being opaque:
            // every entry is looked at, whiteouts among them, whatever d_type says.)
            m.opaque = value == "y";
        } else if (key == "redirect" || key == "metacopy" || key == "lowerdata") {
            m.unsupported = name;
        }
        // origin, impure, nlink, uuid, protattr: bookkeeping, no meaning for the change set.
    }
    return m;
}

std::string xattr_limit_problem(const Xattrs& xattrs) {
    size_t list = 0;
    for (const auto& [name, value] : xattrs) {
        if (name.size() > kXattrNameMax)
            return "xattr name " + base::display_path(name.substr(0, 40)) + "... is " + base::thousands(name.size()) +
                   " bytes long; Linux allows " + std::to_string(kXattrNameMax) + " (XATTR_NAME_MAX)";
        if (value.size() > kXattrSizeMax)
            return "xattr " + base::display_path(name) + " holds " + base::thousands(value.size()) +
                   " bytes; Linux allows " + base::thousands(kXattrSizeMax) + " per value (XATTR_SIZE_MAX)";
        list += name.size() + 1;
    }
    if (list > kXattrListMax)
        return base::thousands(xattrs.size()) + " xattrs whose names take " + base::thousands(list) +
               " bytes; Linux allows " + base::thousands(kXattrListMax) + " per file (XATTR_LIST_MAX)";
    return "";
}

}  // namespace capture
