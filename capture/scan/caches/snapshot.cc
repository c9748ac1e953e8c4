// The status snapshot's stored form (capture/scan/caches/snapshot.h): pure.
#include "capture/scan/caches/snapshot.h"

#include <cstring>

#include "capture/scan/caches/varint.h"

namespace capture {

namespace {

// Bump with the verdict cache's "risks" number (verdicts.cc) or whenever
// the walk's output for the same trees changes: an older file then parses
// as none (version 1: fixed 8-byte fields).
const char kMagic[] = "layover-status-snapshot 2 risks 1\n";

// Counts, sizes, modes and ids as varints (varint.h); an mtime as 8 bytes
// (as a varint it would take 9); a key as the verdict cache stores one
// (put_stat_key, verdicts.h).
class Out {
public:
    std::string s;
    void u64(uint64_t v) { put_varint(&s, v); }
    void str(std::string_view v) {
        u64(v.size());
        s.append(v);
    }
    void key(const PathKey& k) {
        char b[64];
        char* p = varint_at(b, k.path.size());
        s.append(b, static_cast<size_t>(p - b));
        s.append(k.path);
        p = b;
        *p++ = k.absent ? 1 : 0;
        p = put_stat_key(p, k.key);
        s.append(b, static_cast<size_t>(p - b));
    }
};

class In {
public:
    explicit In(std::string_view d) : d_(d) {}
    bool u64(uint64_t* v) { return get_varint(&d_, v); }
    bool time(int64_t* v) {
        uint64_t u = 0;
        if (!get_fixed64(&d_, &u)) return false;
        *v = static_cast<int64_t>(u);
        return true;
    }
    bool u32(uint32_t* v) {
        uint64_t u = 0;
        if (!u64(&u) || u > UINT32_MAX) return false;
        *v = static_cast<uint32_t>(u);
        return true;
    }
    bool u8(unsigned* v, unsigned max) {
        if (d_.empty() || static_cast<unsigned char>(d_[0]) > max) return false;
        *v = static_cast<unsigned char>(d_[0]);
        d_.remove_prefix(1);
        return true;
    }
    bool flag(bool* v) {
        unsigned x = 0;
        if (!u8(&x, 1)) return false;
        *v = x == 1;
        return true;
    }
    bool str(std::string* v) {
        uint64_t n = 0;
        if (!u64(&n) || n > d_.size()) return false;
        v->assign(d_.data(), static_cast<size_t>(n));
        d_.remove_prefix(static_cast<size_t>(n));
        return true;
    }
    // A count of items of at least `min` bytes each: never more than the rest can hold.
    bool count(uint64_t* n, size_t min) { return u64(n) && *n <= d_.size() / min; }
    bool key(PathKey* k) { return str(&k->path) && flag(&k->absent) && get_stat_key(&d_, &k->key); }
    bool done() const { return d_.empty(); }

private:
    std::string_view d_;
};

// A change's fixed fields go through a buffer on the stack, a few appends
// a change instead of one per field (the snapshot is serialized on the
// tail of a first status, beside the listing).
void put_change(Out* o, const Change& c) {
    char b[64];
    char* p = varint_at(b, c.path.size());
    o->s.append(b, static_cast<size_t>(p - b));
    o->s.append(c.path);
    p = b;
    *p++ = static_cast<char>(c.kind);
    *p++ = static_cast<char>(c.type);
    p = varint_at(p, c.size);
    p = varint_at(p, c.mode);
    *p++ = static_cast<char>(c.old_type);
    p = varint_at(p, c.old_mode);
    p = varint_at(p, c.link_target.size());
    o->s.append(b, static_cast<size_t>(p - b));
    o->s.append(c.link_target);
    p = b;
    *p++ = c.captured ? 1 : 0;
    p = fixed64_at(p, static_cast<uint64_t>(c.mtime_ns));
    p = varint_at(p, c.xattrs.size());
    o->s.append(b, static_cast<size_t>(p - b));
    for (const auto& [k, v] : c.xattrs) {
        o->str(k);
        o->str(v);
    }
    p = b;
    *p++ = c.ignored ? 1 : 0;
    p = varint_at(p, c.old_nlink);
    p = varint_at(p, c.layer);
    *p++ = c.risk_free_cached || c.content_read == Change::Read::Free ? 1 : 0;
    *p++ = c.stale ? 1 : 0;
    o->s.append(b, static_cast<size_t>(p - b));
}

bool get_change(In* in, Change* c) {
    unsigned kind = 0, type = 0, old_type = 0;
    uint64_t nx = 0;
    if (!in->str(&c->path) || !in->u8(&kind, static_cast<unsigned>(Kind::OpaqueDir)) ||
        !in->u8(&type, static_cast<unsigned>(Type::Other)) || !in->u64(&c->size) || !in->u32(&c->mode) ||
        !in->u8(&old_type, static_cast<unsigned>(Type::Other)) || !in->u32(&c->old_mode) || !in->str(&c->link_target) ||
        !in->flag(&c->captured) || !in->time(&c->mtime_ns) || !in->count(&nx, 2))
        return false;
    c->kind = static_cast<Kind>(kind);
    c->type = static_cast<Type>(type);
    c->old_type = static_cast<Type>(old_type);
    for (uint64_t i = 0; i < nx; i++) {
        std::string k, v;
        if (!in->str(&k) || !in->str(&v)) return false;
        c->xattrs.emplace(std::move(k), std::move(v));
    }
    return in->flag(&c->ignored) && in->u64(&c->old_nlink) && in->u32(&c->layer) && in->flag(&c->risk_free_cached) &&
           in->flag(&c->stale);
}

void put_keys(Out* o, const std::vector<PathKey>& ks) {
    o->u64(ks.size());
    for (const auto& k : ks) o->key(k);
}

bool get_keys(In* in, std::vector<PathKey>* ks) {
    uint64_t n = 0;
    if (!in->count(&n, 14)) return false;  // a key: 6 fields of a byte or more, its mtime 8
    ks->resize(static_cast<size_t>(n));
    for (auto& k : *ks)
        if (!in->key(&k)) return false;
    return true;
}

}  // namespace

std::string serialize_snapshot(const StatusSnapshot& s, std::span<const Change> changes) {
    Out o;
    o.s.reserve(64 + s.inputs.size() + (changes.size() + s.keys.real.size() + s.keys.dirs.size()) * 64);
    o.s.append(kMagic);
    o.u64(s.gen);
    o.str(s.inputs);
    o.u64(s.ignored);
    o.u64(s.excluded_seen.size());
    for (const auto& x : s.excluded_seen) o.str(x);
    o.u64(changes.size());
    for (const auto& c : changes) put_change(&o, c);
    put_keys(&o, s.keys.real);
    put_keys(&o, s.keys.dirs);
    return std::move(o.s);
}

bool parse_snapshot(std::string_view data, StatusSnapshot* out) {
    *out = StatusSnapshot{};
    size_t m = std::strlen(kMagic);
    if (data.substr(0, m) != kMagic) return false;
    In in(data.substr(m));
    uint64_t n = 0;
    if (!in.u64(&out->gen) || !in.str(&out->inputs) || !in.u64(&out->ignored) || !in.count(&n, 1)) return false;
    out->excluded_seen.resize(static_cast<size_t>(n));
    for (auto& x : out->excluded_seen)
        if (!in.str(&x)) return false;
    if (!in.count(&n, 23)) return false;  // a change: 15 fields of a byte or more, its mtime 8
    out->changes.resize(static_cast<size_t>(n));
    for (auto& c : out->changes)
        if (!get_change(&in, &c)) return false;
    if (!get_keys(&in, &out->keys.real) || !get_keys(&in, &out->keys.dirs) || !in.done()) return false;
    return true;
}

bool snapshot_racy(const SnapshotKeys& k, int64_t start_ns) {
    for (const auto* v : {&k.real, &k.dirs})
        for (const auto& p : *v)
            if (!p.absent && p.key.ctime_ns > start_ns - kRacyNs) return true;
    return false;
}

}  // namespace capture
