#include "capture/scan/entry/fingerprint.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "helper/base/text.h"

namespace capture {

namespace {

constexpr size_t kChunk = 1 << 20;

void put_le64(unsigned char* p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

std::string hex128(XXH128_hash_t h) {
    // Canonical (big-endian) byte order, as XXH128_canonicalFromHash gives.
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    return base::to_hex(std::string_view(reinterpret_cast<const char*>(c.digest), sizeof c.digest));
}

// Next data offset at or after pos (size when none), or -1 on error.
int64_t next_data(int fd, uint64_t pos, uint64_t size) {
    off_t r = ::lseek(fd, static_cast<off_t>(pos), SEEK_DATA);
    if (r < 0) return errno == ENXIO ? static_cast<int64_t>(size) : -1;
    return std::min<int64_t>(r, static_cast<int64_t>(size));
}

int64_t next_hole(int fd, uint64_t pos, uint64_t size) {
    off_t r = ::lseek(fd, static_cast<off_t>(pos), SEEK_HOLE);
    if (r < 0) return errno == ENXIO ? static_cast<int64_t>(size) : -1;
    return std::min<int64_t>(r, static_cast<int64_t>(size));
}

base::Result<void> pread_all(int fd, char* buf, size_t len, uint64_t off) {
    while (len > 0) {
        ssize_t n = ::pread(fd, buf, len, static_cast<off_t>(off));
        if (n < 0) {
            if (errno == EINTR) continue;
            return base::sys_error("reading");
        }
        if (n == 0) return base::error("it shrank while being read (something changed it meanwhile); try again");
        buf += n;
        len -= static_cast<size_t>(n);
        off += static_cast<uint64_t>(n);
    }
    return base::Ok();
}

}  // namespace

Fingerprint::Fingerprint() : data_(XXH3_createState()), map_(XXH3_createState()) {
    XXH3_128bits_reset(data_);
    XXH3_128bits_reset(map_);
}

Fingerprint::~Fingerprint() {
    XXH3_freeState(data_);
    XXH3_freeState(map_);
}

void Fingerprint::close_segment() {
    if (!in_seg_) return;
    unsigned char rec[16];
    put_le64(rec, seg_start_);
    put_le64(rec + 8, seg_len_);
    XXH3_128bits_update(map_, rec, sizeof rec);
    in_seg_ = false;
}

void Fingerprint::data(uint64_t offset, const void* p, size_t len) {
    if (len == 0) return;
    if (!in_seg_ || offset != seg_start_ + seg_len_) {
        close_segment();
        in_seg_ = true;
        seg_start_ = offset;
        seg_len_ = 0;
    }
    seg_len_ += len;
    XXH3_128bits_update(data_, p, len);
}

std::string Fingerprint::finish(uint64_t logical_size) {
    close_segment();
    XXH128_canonical_t m;
    XXH128_canonicalFromHash(&m, XXH3_128bits_digest(map_));
    XXH3_128bits_update(data_, m.digest, sizeof m.digest);
    unsigned char sz[8];
    put_le64(sz, logical_size);
    XXH3_128bits_update(data_, sz, sizeof sz);
    return hex128(XXH3_128bits_digest(data_));
}

std::string fingerprint_bytes(std::string_view s) {
    Fingerprint f;
    f.data(0, s.data(), s.size());
    return f.finish(s.size());
}

base::Result<Segments> data_segments(int fd, uint64_t size) {
    Segments segs;
    if (size == 0) return segs;
    // Most files have no hole: one SEEK_HOLE that lands on the end says so
    // (the loop below would ask SEEK_DATA, then SEEK_HOLE). The same map.
    int64_t first_hole = next_hole(fd, 0, size);
    if (first_hole == static_cast<int64_t>(size)) {
        segs.emplace_back(0, size);
        return segs;
    }
    uint64_t pos = 0;
    while (pos < size) {
        int64_t d = next_data(fd, pos, size);
        if (d < 0) {
            if (errno != EINVAL && errno != EOPNOTSUPP) return base::sys_error("SEEK_DATA");
            segs.assign(1, {0, size});  // no hole support: all data
            return segs;
        }
        if (static_cast<uint64_t>(d) >= size) break;
        int64_t h = next_hole(fd, static_cast<uint64_t>(d), size);
        if (h < 0) return base::sys_error("SEEK_HOLE");
        if (h <= d) h = static_cast<int64_t>(size);
        segs.emplace_back(static_cast<uint64_t>(d), static_cast<uint64_t>(h - d));
        pos = static_cast<uint64_t>(h);
    }
    return segs;
}

void fit_segments(Segments* segs, uint64_t max_segments) {
    max_segments = std::max<uint64_t>(max_segments, 1);
    size_t n = segs->size();
    if (n <= max_segments) return;
    auto gap = [&](size_t i) { return (*segs)[i + 1].first - ((*segs)[i].first + (*segs)[i].second); };
    // Close the `merges` smallest of the n - 1 holes: those below the
    // threshold, then holes equal to it, first come first merged.
    size_t merges = n - static_cast<size_t>(max_segments);
    std::vector<uint64_t> gaps(n - 1);
    for (size_t i = 0; i + 1 < n; i++) gaps[i] = gap(i);
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(merges - 1), gaps.end());
    uint64_t threshold = gaps[merges - 1];
    size_t below = 0;
    for (size_t i = 0; i + 1 < n; i++) below += gap(i) < threshold;
    size_t at_threshold = merges - below;
    Segments out;
    out.reserve(static_cast<size_t>(max_segments));
    out.push_back((*segs)[0]);
    for (size_t i = 0; i + 1 < n; i++) {
        uint64_t g = gap(i);
        bool merge = g < threshold || (g == threshold && at_threshold > 0);
        if (g == threshold && merge) at_threshold--;
        const auto& next = (*segs)[i + 1];
        if (merge) out.back().second = next.first + next.second - out.back().first;
        else out.push_back(next);
    }
    *segs = std::move(out);
}

base::Result<void> read_segments(int fd, const Segments& segs,
                                 const std::function<base::Result<void>(uint64_t, const char*, size_t)>& fn) {
    // One buffer per thread, grown to the biggest chunk read so far: a buffer
    // of its own per file made the scan threads' arenas grow by a page at a
    // time (an mprotect each, 8,000 for 10,000 files) and malloc consolidate.
    uint64_t biggest = 0;
    for (const auto& seg : segs) biggest = std::max(biggest, seg.second);
    size_t want = static_cast<size_t>(std::min<uint64_t>(biggest, kChunk)) + 1;
    // A callback that reads another file (the secret check reading a base)
    // gets a buffer of its own.
    thread_local std::unique_ptr<char[]> shared;
    thread_local size_t shared_size = 0;
    thread_local bool busy = false;
    std::unique_ptr<char[]> own;
    char* buf = nullptr;
    bool mine = !busy;
    if (mine) {
        if (shared_size < want) {
            shared.reset(new char[want]);
            shared_size = want;
        }
        buf = shared.get();
        busy = true;
    } else {
        own.reset(new char[want]);
        buf = own.get();
    }
    struct Release {
        bool on;
        ~Release() {
            if (on) busy = false;
        }
    } release{mine};
    for (auto [off, len] : segs) {
        while (len > 0) {
            size_t n = static_cast<size_t>(std::min<uint64_t>(len, kChunk));
            TRY_VOID(pread_all(fd, buf, n, off));
            TRY_VOID(fn(off, buf, n));
            off += n;
            len -= n;
        }
    }
    return base::Ok();
}

base::Result<std::string> fingerprint_fd(int fd, uint64_t size, bool* text) {
    TRY(Segments segs, data_segments(fd, size));
    Fingerprint f;
    if (text) *text = segs.empty() || (segs.size() == 1 && segs[0].first == 0 && segs[0].second == size);
    TRY_VOID(read_segments(fd, segs, [&](uint64_t off, const char* p, size_t n) -> base::Result<void> {
        if (text && *text && off < kTextProbe)
            *text = std::memchr(p, '\0', static_cast<size_t>(std::min<uint64_t>(n, kTextProbe - off))) == nullptr;
        f.data(off, p, n);
        return base::Ok();
    }));
    return f.finish(size);
}

base::Result<bool> same_content(int a, int b, uint64_t size) {
    size_t n_buf = static_cast<size_t>(std::min<uint64_t>(size, kChunk)) + 1;
    std::unique_ptr<char[]> ba(new char[n_buf]), bb(new char[n_buf]);
    uint64_t pos = 0;
    while (pos < size) {
        int64_t da = next_data(a, pos, size), db = next_data(b, pos, size);
        if (da < 0 || db < 0) {  // no hole support: compare everything
            da = db = static_cast<int64_t>(pos);
        }
        uint64_t start = static_cast<uint64_t>(std::min(da, db));
        if (start >= size) break;
        // [start, end): data in at least one file; read both (a hole reads as zeros).
        auto end_of = [&](int fd, int64_t d) -> int64_t {
            if (static_cast<uint64_t>(d) > start) return d;  // hole until d
            int64_t h = next_hole(fd, start, size);
            return h <= static_cast<int64_t>(start) ? static_cast<int64_t>(size) : h;
        };
        uint64_t end = static_cast<uint64_t>(std::min(end_of(a, da), end_of(b, db)));
        if (end <= start) end = size;
        for (uint64_t off = start; off < end;) {
            size_t n = static_cast<size_t>(std::min<uint64_t>(end - off, kChunk));
            TRY_VOID(pread_all(a, ba.get(), n, off));
            TRY_VOID(pread_all(b, bb.get(), n, off));
            if (std::memcmp(ba.get(), bb.get(), n) != 0) return false;
            off += n;
        }
        pos = end;
    }
    return true;
}

}  // namespace capture
