#include "capture/scan/layers/layer_index.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <random>

#include "helper/base/clock.h"
#include "helper/base/fd.h"

namespace capture {

namespace {

const char kMagic[] = "layover-layer-index 1\n";
const char kFile[] = "layer-index";
constexpr size_t kMaxFile = 256u << 20;  // an index bigger than this is not read
constexpr int kMaxDepth = 4096;          // deeper: no index, the walk lists the layer

int64_t ns_of(const struct statx_timestamp& t) { return base::time_ns(t.tv_sec, t.tv_nsec); }

void put_u64(std::string* out, uint64_t v) {
    for (int i = 0; i < 8; i++) out->push_back(static_cast<char>(v >> (8 * i)));
}

void put_str(std::string* out, const std::string& s) {
    put_u64(out, s.size());
    *out += s;
}

struct Reader {
    std::string_view in;
    bool ok = true;
    uint64_t u64() {
        if (in.size() < 8) return ok = false, 0;
        uint64_t v = 0;
        for (int i = 0; i < 8; i++) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
        in.remove_prefix(8);
        return v;
    }
    unsigned char byte() {
        if (in.empty()) return ok = false, 0;
        unsigned char c = static_cast<unsigned char>(in[0]);
        in.remove_prefix(1);
        return c;
    }
    std::string str() {
        uint64_t n = u64();
        if (!ok || n > in.size()) return ok = false, std::string();
        std::string s(in.substr(0, n));
        in.remove_prefix(n);
        return s;
    }
};

bool valid_name(std::string_view n) {
    return !n.empty() && n != "." && n != ".." && n.find('/') == std::string_view::npos &&
           n.find('\0') == std::string_view::npos;
}

bool valid_path(std::string_view p) {
    if (p.empty()) return true;  // the layer's root
    for (size_t start = 0;;) {
        size_t slash = p.find('/', start);
        if (!valid_name(p.substr(start, slash == std::string_view::npos ? slash : slash - start))) return false;
        if (slash == std::string_view::npos) return true;
        start = slash + 1;
    }
}

char mark_of(int fd) {
    char v[4];
    ssize_t n = ::fgetxattr(fd, "user.overlay.opaque", v, sizeof v);
    if (n == 1 && (v[0] == 'y' || v[0] == 'x')) return v[0];
    return 0;
}

base::Result<void> walk(int fd, const std::string& path, int depth, LayerIndex* out) {
    if (depth > kMaxDepth) return base::error("layer too deep to index");
    TRY(std::vector<base::DirEntry> names, base::list_dir(fd));
    LayerIndex::Dir d;
    d.mark = mark_of(fd);
    for (const auto& e : names) {
        if (e.type != DT_DIR && e.type != DT_UNKNOWN) continue;
        if (e.type == DT_UNKNOWN) {
            struct stat st;
            if (::fstatat(fd, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return base::sys_error("indexing layer");
            if (!S_ISDIR(st.st_mode)) continue;
        }
        TRY(base::Fd sub, base::open_at(fd, e.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
        TRY_VOID(walk(sub.get(), path.empty() ? e.name : path + "/" + e.name, depth + 1, out));
    }
    d.names = std::move(names);
    out->dirs.emplace(path, std::move(d));
    return base::Ok();
}

std::vector<LayerIndex> load(int session_dirfd) {
    base::Fd fd(::openat(session_dirfd, kFile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) return {};
    struct stat st;
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return {};
    auto data = base::read_all(fd.get(), kMaxFile);
    return data ? indexes_from_bytes(data.value()) : std::vector<LayerIndex>{};
}

void store(int session_dirfd, const std::vector<const LayerIndex*>& keep) {
    std::string data = indexes_to_bytes(keep);
    std::random_device rd;
    std::string tmp = std::string(".") + kFile + "-" + std::to_string(rd() % 1000000000u);
    base::Fd fd(::openat(session_dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) return;
    bool ok = base::write_all(fd.get(), data.data(), data.size()).ok();
    fd.reset();
    if (!ok || ::renameat(session_dirfd, tmp.c_str(), session_dirfd, kFile) != 0)
        ::unlinkat(session_dirfd, tmp.c_str(), 0);
}

}  // namespace

base::Result<LayerIndex::Key> layer_key(int layer_fd) {
    struct statx st {};
    if (::statx(layer_fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &st) != 0)
        return base::sys_error("reading layer");
    LayerIndex::Key k;
    k.dev = (static_cast<uint64_t>(st.stx_dev_major) << 32) | st.stx_dev_minor;
    k.ino = st.stx_ino;
    k.ctime_ns = ns_of(st.stx_ctime);
    k.mtime_ns = ns_of(st.stx_mtime);
    k.btime_ns = (st.stx_mask & STATX_BTIME) ? ns_of(st.stx_btime) : 0;
    return k;
}

base::Result<LayerIndex> build_layer_index(int layer_fd) {
    LayerIndex out;
    TRY(out.key, layer_key(layer_fd));
    TRY_VOID(walk(layer_fd, "", 0, &out));
    return out;
}

std::string indexes_to_bytes(const std::vector<const LayerIndex*>& indexes) {
    std::string out(kMagic);
    for (const LayerIndex* l : indexes) {
        const LayerIndex::Key& k = l->key;
        for (uint64_t v : {k.dev, k.ino, static_cast<uint64_t>(k.ctime_ns), static_cast<uint64_t>(k.mtime_ns),
                           static_cast<uint64_t>(k.btime_ns)})
            put_u64(&out, v);
        put_u64(&out, l->dirs.size());
        for (const auto& [path, d] : l->dirs) {
            put_str(&out, path);
            out.push_back(d.mark);
            put_u64(&out, d.names.size());
            for (const auto& e : d.names) {
                out.push_back(static_cast<char>(e.type));
                put_str(&out, e.name);
            }
        }
    }
    return out;
}

std::vector<LayerIndex> indexes_from_bytes(std::string_view data) {
    size_t magic = sizeof kMagic - 1;
    if (data.substr(0, magic) != std::string_view(kMagic, magic)) return {};
    Reader r{data.substr(magic)};
    std::vector<LayerIndex> out;
    while (r.ok && !r.in.empty()) {
        LayerIndex l;
        l.key.dev = r.u64();
        l.key.ino = r.u64();
        l.key.ctime_ns = static_cast<int64_t>(r.u64());
        l.key.mtime_ns = static_cast<int64_t>(r.u64());
        l.key.btime_ns = static_cast<int64_t>(r.u64());
        uint64_t ndirs = r.u64();
        if (!r.ok || ndirs > r.in.size() / 17 + 1) return {};  // a dir takes at least 17 bytes
        for (uint64_t i = 0; i < ndirs; i++) {
            std::string path = r.str();
            LayerIndex::Dir d;
            d.mark = static_cast<char>(r.byte());
            uint64_t n = r.u64();
            if (!r.ok || !valid_path(path) || (d.mark != 0 && d.mark != 'y' && d.mark != 'x') || n > r.in.size() / 10)
                return {};
            d.names.reserve(n);
            for (uint64_t j = 0; j < n; j++) {
                unsigned char type = r.byte();
                std::string name = r.str();
                // Sorted, each once: what the walk's merge expects of a listing.
                if (!r.ok || !valid_name(name) || (!d.names.empty() && !(d.names.back().name < name))) return {};
                d.names.push_back({std::move(name), type});
            }
            if (!l.dirs.emplace(std::move(path), std::move(d)).second) return {};
        }
        if (!l.find("")) return {};
        out.push_back(std::move(l));
    }
    if (!r.ok) return {};
    return out;
}

std::vector<std::shared_ptr<const LayerIndex>> index_layers(int session_dirfd, const std::vector<int>& frozen_fds) {
    std::vector<std::shared_ptr<const LayerIndex>> out(frozen_fds.size());
    std::vector<LayerIndex> loaded = load(session_dirfd);
    size_t used = 0;
    bool built = false;
    for (size_t i = 0; i < frozen_fds.size(); i++) {
        if (frozen_fds[i] < 0) continue;
        auto key = layer_key(frozen_fds[i]);
        if (!key) continue;
        for (auto& l : loaded) {
            if (!(l.key == key.value()) || l.dirs.empty()) continue;
            out[i] = std::make_shared<const LayerIndex>(std::move(l));
            l.dirs.clear();  // taken (a layer shared twice in one stack is indexed twice)
            used++;
            break;
        }
        if (out[i]) continue;
        auto made = build_layer_index(frozen_fds[i]);
        // An empty layer (a freeze cut short leaves one, and the next freeze
        // reuses its dir as the live upper) is never indexed.
        if (!made || !(made->key == key.value()) || made->find("")->names.empty()) continue;
        out[i] = std::make_shared<const LayerIndex>(std::move(made.value()));
        built = true;
    }
    if (built || used != loaded.size()) {
        std::vector<const LayerIndex*> keep;
        for (const auto& l : out)
            if (l) keep.push_back(l.get());
        store(session_dirfd, keep);
    }
    return out;
}

}  // namespace capture
