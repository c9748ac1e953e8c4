#include "helper/store/records/rename_temps.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "helper/base/dir.h"
#include "helper/base/fd.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"

namespace rename_temps {

namespace {

constexpr const char* kPrefix = ".layover-rename-";

uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

uint64_t le64(const unsigned char* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

std::string hex64(uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

// The raw 16 bytes of a key given as 32 hex digits; empty when it is not one.
std::string raw_key(const std::string& key) {
    std::string raw;
    if (key.size() != 32 || !base::from_hex(key, &raw)) return {};
    return raw;
}

std::string tag(const std::string& key, uint64_t id) {
    std::string msg(reinterpret_cast<const char*>(&id), sizeof id);
    return hex64(siphash(raw_key(key), msg));
}

}  // namespace

uint64_t siphash(const std::string& key16, const std::string& msg) {
    const auto* k = reinterpret_cast<const unsigned char*>(key16.data());
    uint64_t k0 = key16.size() == 16 ? le64(k) : 0, k1 = key16.size() == 16 ? le64(k + 8) : 0;
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
    auto round = [&] {
        v0 += v1;
        v1 = rotl(v1, 13) ^ v0;
        v0 = rotl(v0, 32);
        v2 += v3;
        v3 = rotl(v3, 16) ^ v2;
        v0 += v3;
        v3 = rotl(v3, 21) ^ v0;
        v2 += v1;
        v1 = rotl(v1, 17) ^ v2;
        v2 = rotl(v2, 32);
    };
    const auto* m = reinterpret_cast<const unsigned char*>(msg.data());
    size_t n = msg.size(), full = n - n % 8;
    for (size_t at = 0; at < full; at += 8) {
        uint64_t w = le64(m + at);
        v3 ^= w;
        round();
        round();
        v0 ^= w;
    }
    uint64_t last = static_cast<uint64_t>(n & 0xff) << 56;
    for (size_t i = 0; i < n % 8; i++) last |= static_cast<uint64_t>(m[full + i]) << (8 * i);
    v3 ^= last;
    round();
    round();
    v0 ^= last;
    v2 ^= 0xff;
    for (int i = 0; i < 4; i++) round();
    return v0 ^ v1 ^ v2 ^ v3;
}

base::Result<std::string> new_key() {
    unsigned char b[16];
    if (::getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) return base::sys_error("making a rename key");
    return base::to_hex(std::string_view(reinterpret_cast<const char*>(b), sizeof b));
}

std::string temp_name(const std::string& key, uint64_t id) {
    char idhex[17];
    std::snprintf(idhex, sizeof idhex, "%llx", static_cast<unsigned long long>(id));
    return std::string(kPrefix) + idhex + "-" + tag(key, id);
}

bool is_temp_name(const std::string& key, const std::string& name) {
    size_t plen = std::strlen(kPrefix);
    if (name.compare(0, plen, kPrefix) != 0 || raw_key(key).empty()) return false;
    size_t dash = name.find('-', plen);
    if (dash == std::string::npos || dash == plen || dash - plen > 16) return false;
    uint64_t id = 0;
    for (size_t i = plen; i < dash; i++) {
        char c = name[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return false;
        id = id << 4 | static_cast<uint64_t>(d);
    }
    return name == temp_name(key, id);
}

std::string key_path(const std::string& session_dir) { return session_dir + "/rename-temps"; }

namespace {

std::string read_key(const std::string& session_dir) {
    base::Fd fd(::open(key_path(session_dir).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) return {};
    char buf[64];
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 32) return {};
    std::string key(buf, 32);
    return raw_key(key).empty() ? std::string() : key;
}

}  // namespace

base::Result<std::string> key_for_run(const std::string& session_dir) {
    std::string key = read_key(session_dir);
    if (!key.empty()) return key;
    TRY(key, new_key());
    std::string path = key_path(session_dir), tmp = path + ".tmp";
    base::Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) return base::sys_error("writing " + path);
    std::string line = key + "\n";
    TRY_VOID(base::write_all(fd.get(), line.data(), line.size()));
    if (::rename(tmp.c_str(), path.c_str()) != 0) return base::sys_error("writing " + path);
    return key;
}

namespace {

// The mount an fd is on (0: not known).
uint64_t mount_of(int fd) {
    struct statx stx;
    if (::statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) != 0 || !(stx.stx_mask & STATX_MNT_ID)) return 0;
    return stx.stx_mnt_id;
}

// One dir on the way down: who it is, and its subdirs still to visit.
struct Level {
    dev_t dev;
    ino_t ino;
    std::vector<std::string> subdirs;
};

// The temp dirs in `dir` removed, its other subdirs listed in *subdirs.
// False: it could not be read, or a temp dir not removed.
bool sweep_one(int dir, const std::string& key, std::vector<std::string>* subdirs) {
    auto names = base::list_dir(dir);
    if (!names) return false;
    bool whole = true;
    for (const auto& e : names.value()) {
        bool is_dir = e.type == DT_DIR;
        if (e.type == DT_UNKNOWN) {
            struct stat st;
            is_dir = ::fstatat(dir, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        }
        if (!is_dir) continue;
        if (is_temp_name(key, e.name)) {
            if (!review::remove_tree_at(dir, e.name)) whole = false;
        } else {
            subdirs->push_back(e.name);
        }
    }
    return whole;
}

}  // namespace

bool sweep_layer(const std::string& layer, const std::string& key) {
    // fd-relative, one fd at a time, whatever the depth: each dir opened by
    // its name in its parent (O_NOFOLLOW, never a symlink, nor onto another
    // mount), and the walk goes back up by "..", checked to be the dir it
    // came from. A path from the layer may then be longer than PATH_MAX
    // (the sandbox can make such trees: a leftover under one was never
    // swept), and the walk holds no fd per level.
    base::Fd cur(::open(layer.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!cur.valid()) return errno == ENOENT;
    uint64_t mnt = mount_of(cur.get());
    struct stat st;
    if (mnt == 0 || ::fstat(cur.get(), &st) != 0) return false;
    std::vector<Level> path;
    path.push_back({st.st_dev, st.st_ino, {}});
    bool whole = sweep_one(cur.get(), key, &path.back().subdirs);
    while (!path.empty()) {
        Level& top = path.back();
        if (top.subdirs.empty()) {
            path.pop_back();
            if (path.empty()) break;
            base::Fd up(::openat(cur.get(), "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!up.valid() || ::fstat(up.get(), &st) != 0 || st.st_dev != path.back().dev ||
                st.st_ino != path.back().ino)
                return false;  // moved meanwhile: another try later
            cur = std::move(up);
            continue;
        }
        std::string name = std::move(top.subdirs.back());
        top.subdirs.pop_back();
        base::Fd sub(::openat(cur.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub.valid() || ::fstat(sub.get(), &st) != 0) {
            whole = false;
            continue;
        }
        if (mount_of(sub.get()) != mnt) {  // another mount: not the layer's, never entered
            whole = false;
            continue;
        }
        cur = std::move(sub);
        path.push_back({st.st_dev, st.st_ino, {}});
        if (!sweep_one(cur.get(), key, &path.back().subdirs)) whole = false;
    }
    return whole;
}

void sweep_session(const std::string& session_dir) {
    std::string key = read_key(session_dir);
    if (key.empty()) return;
    bool whole = sweep_layer(session_dir + "/upper", key);
    base::Fd outside(::open((session_dir + "/outside").c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (outside.valid()) {
        auto roots = base::list_dir(outside.get());
        if (!roots) whole = false;
        else
            for (const auto& r : roots.value())
                whole = sweep_layer(session_dir + "/outside/" + r.name + "/upper", key) && whole;
    }
    if (whole) forget_key(session_dir);
}

bool sweep_upper(const std::string& session_dir) {
    std::string key = read_key(session_dir);
    if (key.empty()) return false;
    (void)sweep_layer(session_dir + "/upper", key);
    return true;
}

void forget_key(const std::string& session_dir) { ::unlink(key_path(session_dir).c_str()); }

}  // namespace rename_temps
