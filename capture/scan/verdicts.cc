#include "capture/scan/verdicts.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "helper/base/fd.h"

namespace capture {

namespace {

// Version 2 added the risk-free verdicts. Bump the "risks" number whenever
// review's content-risk rules (secrets.cc, content_risk.cc) find more: a
// file once read as risk-free must be read again.
const char kMagic[] = "layover-verdicts 2 risks 1\n";
enum Flags : unsigned char { kSameContent = 1, kSameXattrs = 2, kHasVerdict = 4, kRiskFree = 8, kAll = 15 };
const char kFile[] = "verdicts";
constexpr size_t kMaxFile = 256u << 20;  // a cache bigger than this is not read

void put_u64(std::string* out, uint64_t v) {
    char b[8];
    for (int i = 0; i < 8; i++) b[i] = static_cast<char>(v >> (8 * i));
    out->append(b, 8);  // one append, not eight push_backs
}

bool get_u64(std::string_view* in, uint64_t* v) {
    if (in->size() < 8) return false;
    *v = 0;
    for (int i = 0; i < 8; i++) *v |= static_cast<uint64_t>(static_cast<unsigned char>((*in)[i])) << (8 * i);
    in->remove_prefix(8);
    return true;
}

void put_key(std::string* out, const StatKey& k) {
    put_u64(out, k.dev);
    put_u64(out, k.ino);
    put_u64(out, k.size);
    put_u64(out, static_cast<uint64_t>(k.mtime_ns));
    put_u64(out, static_cast<uint64_t>(k.ctime_ns));
}

bool get_key(std::string_view* in, StatKey* k) {
    uint64_t m = 0, c = 0;
    if (!get_u64(in, &k->dev) || !get_u64(in, &k->ino) || !get_u64(in, &k->size) || !get_u64(in, &m) ||
        !get_u64(in, &c))
        return false;
    k->mtime_ns = static_cast<int64_t>(m);
    k->ctime_ns = static_cast<int64_t>(c);
    return true;
}

}  // namespace

void VerdictCache::parse(std::string_view data) {
    std::unordered_map<std::string, Slot> got;
    got.reserve(data.size() / 100);  // an entry is ~100 bytes: no rehash while loading
    size_t magic = sizeof kMagic - 1;
    if (data.substr(0, magic) != std::string_view(kMagic, magic)) return;
    data.remove_prefix(magic);
    while (!data.empty()) {
        uint64_t len = 0;
        if (!get_u64(&data, &len) || len > data.size()) return;
        std::string path(data.substr(0, len));
        data.remove_prefix(len);
        Entry e;
        if (!get_key(&data, &e.key.upper) || !get_key(&data, &e.key.lower) || data.empty()) return;
        unsigned char flags = static_cast<unsigned char>(data[0]);
        data.remove_prefix(1);
        if (flags > kAll) return;
        e.v.same_content = flags & kSameContent;
        e.v.same_xattrs = flags & kSameXattrs;
        e.has_verdict = flags & kHasVerdict;
        e.risk_free = flags & kRiskFree;
        Slot& s = got[std::move(path)];
        s.stored = e;
        s.has_stored = true;
    }
    slots_ = std::move(got);
    n_stored_ = slots_.size();
    n_next_ = 0;
}

std::string VerdictCache::serialize() const {
    std::lock_guard<std::mutex> g(mu_);
    std::string out(kMagic);
    out.reserve(n_next_ * 100);
    for (const auto& [path, s] : slots_) {
        if (!s.in_next) continue;
        const Entry& e = s.next;
        put_u64(&out, path.size());
        out += path;
        put_key(&out, e.key.upper);
        put_key(&out, e.key.lower);
        out.push_back(static_cast<char>((e.v.same_content ? kSameContent : 0) | (e.v.same_xattrs ? kSameXattrs : 0) |
                                        (e.has_verdict ? kHasVerdict : 0) | (e.risk_free ? kRiskFree : 0)));
    }
    return out;
}

void VerdictCache::use(Slot& s, const Entry& e) {
    if (!s.in_next) n_next_++;
    s.in_next = true;
    s.next = e;
}

std::optional<Cached> VerdictCache::find(const std::string& path, const PairKey& key) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = slots_.find(path);
    if (it == slots_.end()) return std::nullopt;
    Slot& s = it->second;
    if (!s.has_stored || !s.stored.has_verdict || !(s.stored.key == key)) return std::nullopt;
    use(s, s.stored);
    return s.stored.v;
}

bool VerdictCache::racy(const PairKey& key) const {
    return std::max(key.upper.ctime_ns, key.lower.ctime_ns) > start_ns_ - kRacyNs;
}

void VerdictCache::record(const std::string& path, const PairKey& key, Cached v) {
    if (racy(key)) return;  // compare again next time
    std::lock_guard<std::mutex> g(mu_);
    Slot& s = slots_[path];
    if (!s.in_next || !(s.next.key == key)) use(s, Entry{key, false, {}, false});
    s.next.has_verdict = true;
    s.next.v = v;
    added_ = true;
}

VerdictCache::Peek VerdictCache::peek(const std::string& path) {
    Peek p;
    if (n_stored_ == 0) return p;  // nothing loaded (set before the walk starts)
    std::lock_guard<std::mutex> g(mu_);
    auto it = slots_.find(path);
    if (it == slots_.end()) return p;
    p.slot = &it->second;
    p.known = it->second.has_stored && (it->second.stored.risk_free || it->second.stored.has_verdict);
    return p;
}

bool VerdictCache::note(const std::string& path, const PairKey& key, const Peek* seen) {
    std::lock_guard<std::mutex> g(mu_);
    Slot& s = seen && seen->slot ? *seen->slot : slots_[path];
    s.noted = key;
    s.has_noted = true;
    return known_free(s);
}

bool VerdictCache::known_free(Slot& s) {
    if (!s.has_noted || !s.has_stored || !s.stored.risk_free || !(s.stored.key == s.noted)) return false;
    if (s.in_next && s.next.key == s.noted) s.next.risk_free = true;
    else use(s, s.stored);
    return true;
}

bool VerdictCache::risk_free(const std::string& path) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = slots_.find(path);
    return it != slots_.end() && known_free(it->second);
}

void VerdictCache::record_risk_free(const std::string& path) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = slots_.find(path);
    if (it == slots_.end() || !it->second.has_noted || racy(it->second.noted)) return;  // read again next time
    Slot& s = it->second;
    if (!s.in_next || !(s.next.key == s.noted)) use(s, Entry{s.noted, false, {}, false});
    s.next.risk_free = true;
    added_ = true;
}

bool VerdictCache::dirty() const {
    std::lock_guard<std::mutex> g(mu_);
    return added_ || n_next_ != n_stored_;
}

void VerdictCache::load(int session_dirfd) {
    base::Fd fd(::openat(session_dirfd, kFile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) return;
    struct stat st;
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return;
    if (static_cast<uint64_t>(st.st_size) > kMaxFile) return;
    // One read of the size fstat gave (a cache is replaced by rename, never rewritten in place).
    parse(base::read_upto(fd.get(), static_cast<size_t>(st.st_size)));
}

base::Result<void> VerdictCache::store(int session_dirfd) const {
    std::string data = serialize();
    std::random_device rd;
    std::string tmp = std::string(".") + kFile + "-" + std::to_string(rd() % 1000000000u);
    base::Fd fd(::openat(session_dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) return base::sys_error("writing the verdict cache");
    auto w = base::write_all(fd.get(), data.data(), data.size());
    fd.reset();
    // No fsync: a cache lost in a crash is recomputed; a torn one fails to parse.
    if (!w || ::renameat(session_dirfd, tmp.c_str(), session_dirfd, kFile) != 0) {
        ::unlinkat(session_dirfd, tmp.c_str(), 0);
        return w ? base::sys_error("writing the verdict cache") : w;
    }
    return base::Ok();
}

}  // namespace capture
