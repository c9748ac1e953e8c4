#include "helper/sandbox/disk_floor.h"

#include <sys/statvfs.h>

#include <algorithm>

#include "helper/base/text.h"
#include "overlay/options.h"

namespace disk_floor {

bool parse(const std::string& text, Spec* out) {
    if (text == "none" || text == "0") {
        *out = {Spec::None, 0};
        return true;
    }
    unsigned long long n = 0;
    if (!text.empty() && text.back() == '%') {
        // parse_size's percentage of 100 is n itself.
        if (!overlay::parse_size(text, 100, &n) || n > 50) return false;
        *out = {Spec::Percent, n};
        return true;
    }
    if (!overlay::parse_size(text, 0, &n) || n < (1 << 20)) return false;
    *out = {Spec::Bytes, n};
    return true;
}

uint64_t default_floor(uint64_t fs_bytes) {
    return std::min(std::clamp(fs_bytes / 20, kMinFloor, kMaxFloor), fs_bytes / 4);
}

uint64_t resolve(const Spec& s, uint64_t fs_bytes) {
    switch (s.kind) {
        case Spec::Default: return default_floor(fs_bytes);
        case Spec::None: return 0;
        case Spec::Bytes: return s.value;
        case Spec::Percent: return fs_bytes / 100 * s.value;
    }
    return 0;
}

bool look(const std::string& path, Space* out) {
    struct statvfs st;
    if (::statvfs(path.c_str(), &st) != 0) return false;
    uint64_t unit = st.f_frsize ? st.f_frsize : st.f_bsize;
    out->size = static_cast<uint64_t>(st.f_blocks) * unit;
    out->avail = static_cast<uint64_t>(st.f_bavail) * unit;
    return true;
}

base::Result<Floor> at_start(const Spec& s, const std::string& dir) {
    Floor f;
    f.dir = dir;
    Space sp;
    if (s.kind == Spec::None || !look(dir, &sp)) return f;
    f.bytes = resolve(s, sp.size);
    const std::string size = base::bytes_short(f.bytes);
    f.words = s.kind == Spec::Default   ? "--min-free " + size + " (the default: 5% of the filesystem, 256M-1G)"
              : s.kind == Spec::Percent ? "--min-free " + std::to_string(s.value) + "% (" + size + ")"
                                        : "--min-free " + size;
    if (f.bytes && sp.avail < f.bytes) return base::error(refusal(f, sp.avail));
    return f;
}

std::string refusal(const Floor& f, uint64_t avail) {
    return "only " + base::bytes_short(avail) + " free on the filesystem of " + base::display_path(f.dir) +
           " (the state dir, which holds the sessions), below " + f.words +
           "; free space there ('layover gc', 'layover discard NAME'), or pass a smaller --min-free (e.g. 1G) or "
           "--min-free none";
}

std::string stopped(const Floor& f, uint64_t avail) {
    if (!f.bytes || avail >= f.bytes) return "";
    return f.words + " reached (" + base::bytes_short(avail) + " free on the filesystem of " +
           base::display_path(f.dir) +
           ", the state dir): sandbox stopped; free space there and resume the session, or lower the floor with "
           "--min-free (e.g. 1G, or none)";
}

}  // namespace disk_floor
