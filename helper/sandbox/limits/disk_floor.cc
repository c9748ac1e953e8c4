#include "helper/sandbox/limits/disk_floor.h"

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

uint64_t default_inode_floor(uint64_t fs_inodes) {
    return std::min(std::clamp(fs_inodes / 20, kMinInodeFloor, kMaxInodeFloor), fs_inodes / 4);
}

bool look(const std::string& path, Space* out) {
    struct statvfs st;
    if (::statvfs(path.c_str(), &st) != 0) return false;
    uint64_t unit = st.f_frsize ? st.f_frsize : st.f_bsize;
    out->size = static_cast<uint64_t>(st.f_blocks) * unit;
    out->avail = static_cast<uint64_t>(st.f_bavail) * unit;
    out->files = st.f_files;
    out->favail = st.f_favail;
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
    f.inodes = default_inode_floor(sp.files);
    if (f.inodes)
        f.inode_words = "the inode floor " + std::to_string(f.inodes) +
                        " (the default: 5% of the filesystem's inodes, " + std::to_string(kMinInodeFloor) + "-" +
                        std::to_string(kMaxInodeFloor) + ")";
    if (f.bytes && sp.avail < f.bytes) return base::error(refusal(f, sp.avail));
    if (f.inodes && sp.favail < f.inodes) return base::error(inode_refusal(f, sp.favail));
    return f;
}

// What frees room at once, for both refusals: `discard` alone keeps a
// session in the trash for 24 hours, and `gc` alone prunes only older entries.
constexpr const char* kFreeNow =
    "('layover discard NAME --now' deletes a session at once, one in the trash too; "
    "'layover gc --trash' empties the trash)";

std::string refusal(const Floor& f, uint64_t avail) {
    return "only " + base::bytes_short(avail) + " free on the filesystem of " + base::display_path(f.dir) +
           " (the state dir, which holds the sessions), below " + f.words + "; free space there " + kFreeNow +
           ", or pass a smaller --min-free (e.g. 1G) or --min-free none";
}

std::string inode_refusal(const Floor& f, uint64_t favail) {
    return "only " + std::to_string(favail) + " inodes free on the filesystem of " + base::display_path(f.dir) +
           " (the state dir, which holds the sessions), below " + f.inode_words + "; remove files there " + kFreeNow +
           ", or pass --min-free none";
}

std::string stopped(const Floor& f, uint64_t avail) {
    if (!f.bytes || avail >= f.bytes) return "";
    return f.words + " reached (" + base::bytes_short(avail) + " free on the filesystem of " +
           base::display_path(f.dir) +
           ", the state dir): sandbox stopped; free space there and resume the session, or lower the floor with "
           "--min-free (e.g. 1G, or none)";
}

std::string stopped_inodes(const Floor& f, uint64_t favail) {
    if (!f.inodes || favail >= f.inodes) return "";
    return f.inode_words + " reached (" + std::to_string(favail) + " inodes free on the filesystem of " +
           base::display_path(f.dir) +
           ", the state dir): sandbox stopped; remove files there and resume the session, or turn the floors off "
           "with --min-free none";
}

uint64_t room(const Floor& f, const Space& sp) {
    uint64_t r = UINT64_MAX;
    if (f.bytes) r = sp.avail > f.bytes ? sp.avail - f.bytes : 0;
    if (f.inodes) {
        uint64_t n = sp.favail > f.inodes ? sp.favail - f.inodes : 0;
        r = std::min(r, std::min(n, UINT64_MAX / kBytesPerInode) * kBytesPerInode);
    }
    return r;
}

}  // namespace disk_floor
