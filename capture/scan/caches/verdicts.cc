#include "capture/scan/caches/verdicts.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <random>

#include "capture/scan/caches/varint.h"
#include "helper/base/dir.h"
#include "helper/base/fd.h"

namespace capture {

namespace {

// Version 2 added the risk-free verdicts; version 3 stores its numbers as
// varints (capture/scan/caches/varint.h): 1.03 MB -> 0.57 MB for 10,000 modified
// files (docs/performance.md, "Status: the two cache files at half their
// size"). Bump the "risks" number whenever review's content-risk rules
// (secrets.cc, content_risk.cc) find more: a file once read as risk-free
// must be read again.
const char kMagic[] = "layover-verdicts 3 risks 1\n";
enum Flags : unsigned char { kSameContent = 1, kSameXattrs = 2, kHasVerdict = 4, kRiskFree = 8, kAll = 15 };
const char kFile[] = "verdicts";
constexpr size_t kMaxFile = 256u << 20;  // a cache bigger than this is not read

uint64_t ctime_delta(const StatKey& k) {
    return zigzag(static_cast<uint64_t>(k.ctime_ns) - static_cast<uint64_t>(k.mtime_ns));
}

}  // namespace

size_t stat_key_len(const StatKey& k) {
    return varint_len(k.dev) + varint_len(k.ino) + varint_len(k.size) + 8 + varint_len(ctime_delta(k));
}

char* put_stat_key(char* p, const StatKey& k) {
    p = varint_at(p, k.dev);
    p = varint_at(p, k.ino);
    p = varint_at(p, k.size);
    p = fixed64_at(p, static_cast<uint64_t>(k.mtime_ns));
    return varint_at(p, ctime_delta(k));
}

bool get_stat_key(std::string_view* in, StatKey* k) {
    uint64_t m = 0, d = 0;
    if (!get_varint(in, &k->dev) || !get_varint(in, &k->ino) || !get_varint(in, &k->size) || !get_fixed64(in, &m) ||
        !get_varint(in, &d))
        return false;
    k->mtime_ns = static_cast<int64_t>(m);
    k->ctime_ns = static_cast<int64_t>(m + unzigzag(d));
    return true;
}

bool VerdictCache::walk_less(std::string_view a, std::string_view b) {
    size_t n = std::min(a.size(), b.size()), i = 0;
    // The first byte that differs, eight at a time.
    for (uint64_t x, y; i + 8 <= n; i += 8) {
        std::memcpy(&x, a.data() + i, 8);
        std::memcpy(&y, b.data() + i, 8);
        if (x != y) break;
    }
    for (; i < n; i++) {
        if (a[i] == b[i]) continue;
        if (a[i] == '/') return true;
        if (b[i] == '/') return false;
        return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
    }
    return a.size() < b.size();
}

void VerdictCache::parse(std::string_view data) { parse_owned(std::string(data)); }

void VerdictCache::parse_owned(std::string data) {
    data_ = std::move(data);
    stored_.clear();
    stored_entries_.clear();
    std::string_view in = data_;
    size_t magic = sizeof kMagic - 1;
    if (in.substr(0, magic) != std::string_view(kMagic, magic)) return;
    in.remove_prefix(magic);
    std::vector<Slot> got;
    std::vector<Entry> entries;
    got.reserve(in.size() / 48);  // an entry is ~50 bytes
    entries.reserve(in.size() / 48);
    while (!in.empty()) {
        uint64_t len = 0;
        if (!get_varint(&in, &len) || len > in.size()) return;
        Slot& s = got.emplace_back();
        s.path = in.substr(0, len);
        in.remove_prefix(len);
        Entry& e = entries.emplace_back();
        if (!get_stat_key(&in, &e.key.upper) || !get_stat_key(&in, &e.key.lower) || in.empty()) return;
        unsigned char flags = static_cast<unsigned char>(in[0]);
        in.remove_prefix(1);
        if (flags > kAll) return;
        e.v.same_content = flags & kSameContent;
        e.v.same_xattrs = flags & kSameXattrs;
        e.has_verdict = flags & kHasVerdict;
        e.risk_free = flags & kRiskFree;
    }
    // Written in walk order; another order (an older file) is sorted once,
    // and of one path the last entry counts.
    bool sorted = true;
    for (size_t i = 1; i < got.size() && sorted; i++) sorted = walk_less(got[i - 1].path, got[i].path);
    if (!sorted) {
        std::vector<size_t> order(got.size());
        for (size_t i = 0; i < order.size(); i++) order[i] = i;
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return walk_less(got[a].path, got[b].path); });
        std::vector<Slot> once;
        std::vector<Entry> their;
        for (size_t k = 0; k < order.size(); k++) {
            if (k + 1 < order.size() && got[order[k]].path == got[order[k + 1]].path) continue;
            once.push_back(std::move(got[order[k]]));
            their.push_back(entries[order[k]]);
        }
        got = std::move(once);
        entries = std::move(their);
    }
    stored_entries_ = std::move(entries);
    for (size_t i = 0; i < got.size(); i++) got[i].stored = &stored_entries_[i];
    stored_ = std::move(got);
    n_next_ = 0;
}

std::string VerdictCache::serialize() const {
    std::lock_guard<std::mutex> g(mu_);
    return serialize_locked();
}

std::string VerdictCache::serialize_locked() const {
    // The stored paths (sorted) and the added ones (sorted here), merged.
    // Each thread made its slots in walk order: its run is merged, not sorted.
    std::vector<const Slot*> added;
    for (const Slot& s : added_)
        if (s.in_next) added.push_back(&s);
    auto less = [](const Slot* a, const Slot* b) { return walk_less(a->path, b->path); };
    std::stable_sort(added.begin(), added.end(), [](const Slot* a, const Slot* b) { return a->maker < b->maker; });
    for (size_t from = 0, to; from < added.size(); from = to) {
        for (to = from + 1; to < added.size() && added[to]->maker == added[from]->maker;) to++;
        if (!std::is_sorted(added.begin() + from, added.begin() + to, less))
            std::sort(added.begin() + from, added.begin() + to, less);
        std::inplace_merge(added.begin(), added.begin() + from, added.begin() + to, less);
    }
    // Sized exactly first: grown as it was filled, the string was zeroed and
    // copied at each doubling (~15% of a first status's page faults).
    auto need = [](const Slot& s) {
        return varint_len(s.path.size()) + s.path.size() + stat_key_len(s.next.key.upper) +
               stat_key_len(s.next.key.lower) + 1;
    };
    size_t total = sizeof kMagic - 1;
    for (const Slot& s : stored_)
        if (s.in_next) total += need(s);
    for (const Slot* s : added) total += need(*s);
    std::string out(kMagic);
    out.resize(total);
    char* p = out.data() + (sizeof kMagic - 1);
    auto put = [&](const Slot& s) {
        const Entry& e = s.next;
        p = varint_at(p, s.path.size());
        std::memcpy(p, s.path.data(), s.path.size());
        p = put_stat_key(p + s.path.size(), e.key.upper);
        p = put_stat_key(p, e.key.lower);
        *p++ = static_cast<char>((e.v.same_content ? kSameContent : 0) | (e.v.same_xattrs ? kSameXattrs : 0) |
                                 (e.has_verdict ? kHasVerdict : 0) | (e.risk_free ? kRiskFree : 0));
    };
    size_t a = 0;
    for (const Slot& s : stored_) {
        if (!s.in_next) continue;
        for (; a < added.size() && walk_less(added[a]->path, s.path); a++) put(*added[a]);
        put(s);
    }
    for (; a < added.size(); a++) put(*added[a]);
    return out;
}

void VerdictCache::use(Slot& s, const Entry& e) {
    if (!s.in_next) n_next_++;
    s.in_next = true;
    s.next = e;
}

VerdictCache::Slot* VerdictCache::stored_slot(std::string_view path) {
    size_t n = stored_.size();
    if (n == 0) return nullptr;
    // Where this thread's last lookup ended: the walk asks in this order.
    thread_local size_t hint = 0;
    size_t h = hint < n ? hint : n;
    if (h < n && stored_[h].path == path) {
        hint = h + 1;
        return &stored_[h];
    }
    bool after_prev = h == 0 || walk_less(stored_[h - 1].path, path);
    if (after_prev && (h == n || walk_less(path, stored_[h].path))) return nullptr;  // between the two: absent
    auto it = std::lower_bound(stored_.begin(), stored_.end(), path,
                               [](const Slot& s, std::string_view p) { return walk_less(s.path, p); });
    if (it == stored_.end() || it->path != path) return nullptr;
    hint = static_cast<size_t>(it - stored_.begin()) + 1;
    return &*it;
}

VerdictCache::Slot* VerdictCache::added_slot(const std::string& path, bool create) {
    for (; indexed_ < added_.size(); indexed_++) index_.emplace(added_[indexed_].path, &added_[indexed_]);
    if (auto it = index_.find(path); it != index_.end()) return it->second;
    if (!create) return nullptr;
    return make_slot(path);
}

VerdictCache::Slot* VerdictCache::make_slot(const std::string& path) {
    static std::atomic<uint32_t> threads{0};
    thread_local uint32_t me = threads++;
    Slot& s = added_.emplace_back();
    s.own = path;
    s.path = s.own;
    s.maker = me;
    return &s;
}

VerdictCache::Slot* VerdictCache::slot_of(const std::string& path, Peek* seen, bool create) {
    if (seen && seen->looked) {
        if (seen->slot || !create) return seen->slot;
        // The path's first slot: made without a lookup (peek() found none).
        std::lock_guard<std::mutex> g(mu_);
        seen->slot = make_slot(path);
        return seen->slot;
    }
    Slot* s = stored_slot(path);
    if (!s) {
        std::lock_guard<std::mutex> g(mu_);
        s = added_slot(path, create);
    }
    if (seen) {
        seen->slot = s;
        seen->looked = true;
    }
    return s;
}

std::optional<Cached> VerdictCache::find(const std::string& path, const PairKey& key, Peek* seen) {
    Slot* s = slot_of(path, seen, false);
    if (!s || !s->stored || !s->stored->has_verdict || !(s->stored->key == key)) return std::nullopt;
    use(*s, *s->stored);
    return s->stored->v;
}

bool VerdictCache::racy(const PairKey& key) const {
    return std::max(key.upper.ctime_ns, key.lower.ctime_ns) > start_ns_ - kRacyNs;
}

void VerdictCache::record(const std::string& path, const PairKey& key, Cached v, Peek* seen) {
    if (racy(key)) return;  // compare again next time
    Slot& s = *slot_of(path, seen, true);
    if (!s.in_next || !(s.next.key == key)) use(s, Entry{key, false, {}, false});
    s.next.has_verdict = true;
    s.next.v = v;
    changed_ = true;
}

VerdictCache::Peek VerdictCache::peek(const std::string& path) {
    Peek p;
    p.looked = true;
    p.slot = stored_slot(path);  // nothing else is known of the path yet (the scan's first call for it)
    p.known = p.slot && p.slot->stored && (p.slot->stored->risk_free || p.slot->stored->has_verdict);
    return p;
}

bool VerdictCache::note(const std::string& path, const PairKey& key, Peek* seen) {
    Slot& s = *slot_of(path, seen, true);
    s.noted = key;
    s.has_noted = true;
    return known_free(s);
}

bool VerdictCache::known_free(Slot& s) {
    if (!s.has_noted || !s.stored || !s.stored->risk_free || !(s.stored->key == s.noted)) return false;
    if (s.in_next && s.next.key == s.noted) s.next.risk_free = true;
    else use(s, *s.stored);
    return true;
}

bool VerdictCache::risk_free(const std::string& path) {
    Slot* s = slot_of(path, nullptr, false);
    return s && known_free(*s);
}

void VerdictCache::free_now(Slot& s) {
    if (!s.has_noted || racy(s.noted)) return;  // read again next time
    if (!s.in_next || !(s.next.key == s.noted)) use(s, Entry{s.noted, false, {}, false});
    s.next.risk_free = true;
    changed_ = true;
}

void VerdictCache::record_risk_free(const std::string& path) {
    Slot* s = slot_of(path, nullptr, false);
    if (!s) return;
    std::lock_guard<std::mutex> g(mu_);
    free_now(*s);
    late_++;
}

void VerdictCache::record_risk_free(const Peek& seen) {
    if (seen.slot) free_now(*seen.slot);
}

bool VerdictCache::dirty() const { return changed_ || n_next_ != stored_.size(); }

void VerdictCache::load(int session_dirfd) {
    if (auto data = read_session_cache(session_dirfd, kFile, kMaxFile)) parse_owned(std::move(*data));
}

base::Result<void> VerdictCache::store(int session_dirfd) const {
    return write_session_cache(session_dirfd, kFile, serialize(), "writing the verdict cache");
}

base::Result<void> VerdictCache::store_early(int session_dirfd) {
    std::string data;
    {
        std::lock_guard<std::mutex> g(mu_);
        early_at_ = late_;
        if (!dirty()) return base::Ok();
        data = serialize_locked();
    }
    return write_session_cache(session_dirfd, kFile, data, "writing the verdict cache");
}

bool VerdictCache::late_since_early() const {
    std::lock_guard<std::mutex> g(mu_);
    return late_ != early_at_;
}

std::optional<std::string> read_session_cache(int dirfd, const char* name, size_t max) {
    base::Fd fd(::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) return std::nullopt;
    struct stat st;
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return std::nullopt;
    if (static_cast<uint64_t>(st.st_size) > max) return std::nullopt;
    // One read of the size fstat gave (a cache is replaced by rename, never rewritten in place).
    return base::read_upto(fd.get(), static_cast<size_t>(st.st_size));
}

namespace {

// This cache's temp files an hour old: left by a writer killed between the
// create and the rename (a status stopped by Ctrl+C or a timeout), kept for
// the session's life before (attack52). A younger one may be another
// writer's, at work.
void sweep_temps(int dirfd, const std::string& prefix) {
    auto names = base::list_dir(dirfd);
    if (!names) return;
    time_t old = ::time(nullptr) - 3600;
    for (const auto& e : *names) {
        struct stat st;
        if (e.name.compare(0, prefix.size(), prefix) == 0 &&
            ::fstatat(dirfd, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_mtime < old)
            ::unlinkat(dirfd, e.name.c_str(), 0);
    }
}

}  // namespace

base::Result<void> write_session_cache(int dirfd, const char* name, std::string_view data, const char* what) {
    std::random_device rd;
    std::string prefix = std::string(".") + name + "-";
    std::string tmp = prefix + std::to_string(rd() % 1000000000u);
    base::Fd fd(::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) return base::sys_error(what);
    auto w = base::write_all(fd.get(), data.data(), data.size());
    fd.reset();
    // No fsync: a cache lost in a crash is recomputed; a torn one fails to parse.
    if (!w || ::renameat(dirfd, tmp.c_str(), dirfd, name) != 0) {
        ::unlinkat(dirfd, tmp.c_str(), 0);
        return w ? base::sys_error(what) : w;
    }
    sweep_temps(dirfd, prefix);
    return base::Ok();
}

}  // namespace capture
