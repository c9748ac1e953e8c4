#include "review/diff/algo.h"

#include <xxhash.h>

#include <algorithm>
#include <limits>
#include <string>

namespace review {

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> out;
    size_t start = 0;
    while (start < text.size()) {
        size_t nl = text.find('\n', start);
        size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
        out.push_back(text.substr(start, end - start));
        start = end;
    }
    return out;
}

namespace {

using Idx = long;  // signed: diagonals are negative

// Line ids, numbered from 0 in order of first sight: an open-addressing
// table sized once, so numbering allocates nothing per line (an
// unordered_map's node per line was most of a large diff's time).
class LineIds {
public:
    explicit LineIds(size_t lines) {
        size_t cap = 16;
        while (cap < lines + lines / 2) cap <<= 1;
        slots_.assign(cap, Slot{kEmpty, 0});
        mask_ = cap - 1;
        lines_.reserve(lines);
    }
    uint32_t id(std::string_view line) {
        uint64_t h = XXH3_64bits(line.data(), line.size());
        auto tag = static_cast<uint32_t>(h >> 32);
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            Slot& s = slots_[i];
            if (s.id == kEmpty) {
                s = {static_cast<uint32_t>(lines_.size()), tag};
                lines_.push_back(line);
                return s.id;
            }
            if (s.tag == tag && lines_[s.id] == line) return s.id;
        }
    }

private:
    static constexpr uint32_t kEmpty = UINT32_MAX;
    struct Slot {
        uint32_t id, tag;
    };
    std::vector<Slot> slots_;
    std::vector<std::string_view> lines_;
    size_t mask_ = 0;
};

struct Split {
    Idx i1, i2;
    bool min_lo, min_hi;
};

// One diff problem: the sequences (as line ids) after trimming and after
// dropping lines that have no counterpart at all on the other side.
class Myers {
public:
    Myers(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, uint64_t max_cost)
        : a_(a), b_(b), del_(a.size(), 0), ins_(b.size(), 0) {
        Idx n = static_cast<Idx>(a.size()), m = static_cast<Idx>(b.size());
        size_t diags = static_cast<size_t>(n + m + 3);
        fwd_.assign(diags, 0);
        bwd_.assign(diags, 0);
        off_ = m + 1;
        if (max_cost == 0) {
            uint64_t s = 1;
            while (s * s < static_cast<uint64_t>(n + m)) s <<= 1;  // a power-of-two sqrt is close enough
            max_cost = std::max<uint64_t>(256, s);
        }
        max_cost_ = static_cast<Idx>(max_cost);
    }

    void run() { compare(0, static_cast<Idx>(a_.size()), 0, static_cast<Idx>(b_.size()), false); }
    std::vector<char>& del() { return del_; }
    std::vector<char>& ins() { return ins_; }
    uint64_t work() const { return work_; }

private:
    Idx& F(Idx d) { return fwd_[static_cast<size_t>(d + off_)]; }
    Idx& B(Idx d) { return bwd_[static_cast<size_t>(d + off_)]; }
    bool eq(Idx i, Idx j) const { return a_[static_cast<size_t>(i)] == b_[static_cast<size_t>(j)]; }

    void compare(Idx off1, Idx lim1, Idx off2, Idx lim2, bool need_min) {
        // Recursion depth is logarithmic in practice (each split halves the
        // edit cost); the loop handles the trivial ends without recursing.
        while (off1 < lim1 && off2 < lim2 && eq(off1, off2)) off1++, off2++;
        while (off1 < lim1 && off2 < lim2 && eq(lim1 - 1, lim2 - 1)) lim1--, lim2--;
        if (off1 == lim1) {
            for (Idx j = off2; j < lim2; j++) ins_[static_cast<size_t>(j)] = 1;
            return;
        }
        if (off2 == lim2) {
            for (Idx i = off1; i < lim1; i++) del_[static_cast<size_t>(i)] = 1;
            return;
        }
        Split s = split(off1, lim1, off2, lim2, need_min);
        compare(off1, s.i1, off2, s.i2, s.min_lo);
        compare(s.i1, lim1, s.i2, lim2, s.min_hi);
    }

    // Find the middle snake of the optimal path, or (past the cost cap and
    // when minimality is not required) the furthest-reaching point so far.
    Split split(Idx off1, Idx lim1, Idx off2, Idx lim2, bool need_min) {
        const Idx dmin = off1 - lim2, dmax = lim1 - off2;
        const Idx fmid = off1 - off2, bmid = lim1 - lim2;
        const bool odd = ((fmid - bmid) & 1) != 0;
        Idx fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid;
        F(fmid) = off1;
        B(bmid) = lim1;
        constexpr Idx kFar = std::numeric_limits<Idx>::max();
        for (Idx ec = 1;; ec++) {
            if (fmin > dmin) F(--fmin - 1) = -1;
            else ++fmin;
            if (fmax < dmax) F(++fmax + 1) = -1;
            else --fmax;
            for (Idx d = fmax; d >= fmin; d -= 2) {
                Idx i1 = F(d - 1) >= F(d + 1) ? F(d - 1) + 1 : F(d + 1);
                Idx i2 = i1 - d;
                work_++;
                while (i1 < lim1 && i2 < lim2 && eq(i1, i2)) i1++, i2++, work_++;
                F(d) = i1;
                if (odd && bmin <= d && d <= bmax && B(d) <= i1) return {i1, i2, true, true};
            }
            if (bmin > dmin) B(--bmin - 1) = kFar;
            else ++bmin;
            if (bmax < dmax) B(++bmax + 1) = kFar;
            else --bmax;
            for (Idx d = bmax; d >= bmin; d -= 2) {
                Idx i1 = B(d - 1) < B(d + 1) ? B(d - 1) : B(d + 1) - 1;
                Idx i2 = i1 - d;
                work_++;
                while (i1 > off1 && i2 > off2 && eq(i1 - 1, i2 - 1)) i1--, i2--, work_++;
                B(d) = i1;
                if (!odd && fmin <= d && d <= fmax && i1 <= F(d)) return {i1, i2, true, true};
            }
            if (need_min || ec < max_cost_) continue;
            // Too expensive: split at whichever frontier got furthest. The
            // half on the explored side is exact, the other is re-diffed
            // with the cap still on.
            Idx fbest = -1, fbest1 = -1;
            for (Idx d = fmax; d >= fmin; d -= 2) {
                Idx i1 = std::min(F(d), lim1), i2 = i1 - d;
                if (lim2 < i2) i1 = lim2 + d, i2 = lim2;
                if (fbest < i1 + i2) fbest = i1 + i2, fbest1 = i1;
            }
            Idx bbest = kFar, bbest1 = kFar;
            for (Idx d = bmax; d >= bmin; d -= 2) {
                Idx i1 = std::max(off1, B(d)), i2 = i1 - d;
                if (i2 < off2) i1 = off2 + d, i2 = off2;
                if (i1 + i2 < bbest) bbest = i1 + i2, bbest1 = i1;
            }
            if ((lim1 + lim2) - bbest < fbest - (off1 + off2)) return {fbest1, fbest - fbest1, true, false};
            return {bbest1, bbest - bbest1, false, true};
        }
    }

    const std::vector<uint32_t>& a_;
    const std::vector<uint32_t>& b_;
    std::vector<char> del_, ins_;
    std::vector<Idx> fwd_, bwd_;
    Idx off_ = 0;
    Idx max_cost_ = 0;
    uint64_t work_ = 0;
};

}  // namespace

LineDiff diff_lines(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b,
                    const DiffTuning& tuning) {
    LineDiff out;
    out.del.assign(a.size(), 0);
    out.ins.assign(b.size(), 0);
    size_t pre = 0;
    while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) pre++;
    size_t suf = 0;
    while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) suf++;
    size_t na = a.size() - pre - suf, nb = b.size() - pre - suf;
    if (na == 0 || nb == 0) {
        for (size_t i = 0; i < na; i++) out.del[pre + i] = 1;
        for (size_t j = 0; j < nb; j++) out.ins[pre + j] = 1;
        return out;
    }

    // Number the distinct lines; count each id's uses per side.
    LineIds ids(na + nb);
    std::vector<uint32_t> ca, cb;  // uses in a, in b
    ca.reserve(na + nb);
    cb.reserve(na + nb);
    auto id_of = [&](std::string_view line) {
        uint32_t id = ids.id(line);
        if (id == ca.size()) ca.push_back(0), cb.push_back(0);
        return id;
    };
    std::vector<uint32_t> ia(na), ib(nb);
    for (size_t i = 0; i < na; i++) ca[ia[i] = id_of(a[pre + i])]++;
    for (size_t j = 0; j < nb; j++) cb[ib[j] = id_of(b[pre + j])]++;

    // A line with no counterpart on the other side is certainly changed:
    // leave it out of the search, which then runs on far fewer lines when
    // the two texts are mostly different.
    std::vector<uint32_t> ra, rb;
    std::vector<size_t> ma, mb;  // reduced index -> original index
    ra.reserve(na), ma.reserve(na), rb.reserve(nb), mb.reserve(nb);
    for (size_t i = 0; i < na; i++) {
        if (cb[ia[i]] == 0) {
            out.del[pre + i] = 1;
        } else {
            ra.push_back(ia[i]);
            ma.push_back(pre + i);
        }
    }
    for (size_t j = 0; j < nb; j++) {
        if (ca[ib[j]] == 0) {
            out.ins[pre + j] = 1;
        } else {
            rb.push_back(ib[j]);
            mb.push_back(pre + j);
        }
    }
    Myers m(ra, rb, tuning.max_cost);
    m.run();
    if (tuning.work) *tuning.work = m.work();
    for (size_t i = 0; i < ra.size(); i++)
        if (m.del()[i]) out.del[ma[i]] = 1;
    for (size_t j = 0; j < rb.size(); j++)
        if (m.ins()[j]) out.ins[mb[j]] = 1;
    return out;
}

std::vector<Group> groups_of(const LineDiff& d) {
    std::vector<Group> out;
    size_t i = 0, j = 0, n = d.del.size(), m = d.ins.size();
    while (i < n || j < m) {
        if ((i < n && d.del[i]) || (j < m && d.ins[j])) {
            Group g{i, i, j, j};
            while (g.a1 < n && d.del[g.a1]) g.a1++;
            while (g.b1 < m && d.ins[g.b1]) g.b1++;
            out.push_back(g);
            i = g.a1;
            j = g.b1;
        } else {
            i++;
            j++;
        }
    }
    return out;
}

}  // namespace review
