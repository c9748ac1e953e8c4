// The verdict cache of `status` (docs/design.md, "The verdict cache"): for
// an upper file over a real file of the same size, the one case where the
// walk must read both contents, whether the contents and the xattrs were
// equal, keyed on both files' device, inode, size, mtime and ctime. A later
// `status` of the same ended session reuses a verdict whose key still
// matches and compares nothing. Kept in the session dir, never in the target
// or the upper layer.
// It also keeps, for status's risk marks (review/prompt/risk_scan.h), which
// changed files were read and showed no content risk, keyed the same way on
// the files' stats as this scan saw them (note()).
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "helper/base/result.h"

namespace capture {

struct StatKey {
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    bool operator==(const StatKey&) const = default;
};

// A StatKey's stored form, in the verdict cache and the status snapshot
// alike (verdicts.cc): dev, ino and size as varints, the mtime as 8 bytes,
// the ctime as its zigzagged distance from the mtime (most often 0: one
// byte). stat_key_len: its length; put_stat_key: at p (room for 48 bytes),
// returns the end; get_stat_key: false when torn.
size_t stat_key_len(const StatKey& k);
char* put_stat_key(char* p, const StatKey& k);
bool get_stat_key(std::string_view* in, StatKey* k);

struct PairKey {
    StatKey upper, lower;
    bool operator==(const PairKey&) const = default;
};

struct Cached {
    bool same_content = false;
    bool same_xattrs = false;
};

// A change time this close to the scan's start (or later) is "racy": a write
// in the same timestamp tick could follow the read unseen, so such a verdict
// is never stored (git's index has the same rule). 2 s covers the coarsest
// timestamps Linux filesystems keep.
constexpr int64_t kRacyNs = 2'000'000'000;

class VerdictCache {
public:
    // start_ns: the wall clock when the scan started (CLOCK_REALTIME).
    explicit VerdictCache(int64_t start_ns) : start_ns_(start_ns) {}
    VerdictCache(const VerdictCache&) = delete;
    VerdictCache& operator=(const VerdictCache&) = delete;

    // Pure: the stored form and back. A malformed or foreign file gives an
    // empty cache (it is only a cache). Entries are written in walk order
    // (walk_less), so a later scan finds each the next to the last it found.
    void parse(std::string_view data);
    std::string serialize() const;

    // What the loaded cache holds for a path, looked up before its stat:
    // `known` says a risk-free or a content verdict is stored at some stats
    // (a hint: the walk then only stats the file rather than opening it for
    // the risk read: it was clean, or an unchanged copy, last time). The
    // scan looks each entry up once: passed back to find(), record(),
    // note() and record_risk_free(), the Peek is the path's slot (none
    // needs a lookup of its own). peek() must be the first call of a scan
    // for its path.
    struct Slot;
    struct Peek {
        Slot* slot = nullptr;
        bool known = false;
        bool looked = false;  // from peek(): `slot` is the path's, or it has none yet
    };
    Peek peek(const std::string& path);

    // Thread-safe (the walk may run on two threads), for different paths at
    // once. `seen`: the path's Peek (updated when a slot is made for it).
    std::optional<Cached> find(const std::string& path, const PairKey& key, Peek* seen = nullptr);
    void record(const std::string& path, const PairKey& key, Cached v, Peek* seen = nullptr);
    // The file needs rewriting: a verdict was added, or a stored one was not used.
    bool dirty() const;

    // Content risks. The scan notes each changed file's pair of stats (the
    // real side zero when there is none); note() and then risk_free() say
    // whether the file was read before at those stats and showed no risk
    // (and keep that verdict; the scan sets Change::risk_free_cached from
    // note(), one lookup per file), and record_risk_free() stores that it
    // was read now and showed none (not when racy, as record()). A path
    // never noted is never risk-free.
    bool note(const std::string& path, const PairKey& key, Peek* seen = nullptr);
    bool risk_free(const std::string& path);
    void record_risk_free(const std::string& path);
    void record_risk_free(const Peek& seen);  // the walk, as it reads the file

    // The session dir's file `verdicts`: read (missing or unreadable: empty),
    // and written atomically (temp + rename, mode 0600).
    void load(int session_dirfd);
    base::Result<void> store(int session_dirfd) const;
    // status, as soon as the walk is over: stored while the changes are put
    // in line and listed (docs/performance.md, "Status, sixth pass"). After
    // the walk only record_risk_free(path) changes the cache (under mu_, so
    // it may run meanwhile): late_since_early() says whether one did since
    // the early copy was serialized, so that store() must run again.
    base::Result<void> store_early(int session_dirfd);
    bool late_since_early() const;

    // The walk's order of paths: bytewise, with '/' before every other
    // byte (a dir's entries follow it, before its next sibling).
    static bool walk_less(std::string_view a, std::string_view b);

private:
    struct Entry {
        PairKey key;
        bool has_verdict = false;  // v holds a content verdict
        Cached v;
        bool risk_free = false;
    };

public:
    // One per path: the loaded ones in a sorted array (no hash table to
    // build: a repeated status's load and lookups were a fifth of its CPU),
    // the paths this scan adds in a list of their own. Slots stay put: a
    // Peek points at one.
    struct Slot {
        std::string_view path;          // into data_, or into own
        const Entry* stored = nullptr;  // as loaded (in stored_entries_; none for a path this scan added)
        Entry next;                     // used or computed by this scan (what store() writes)
        PairKey noted;
        bool in_next = false, has_noted = false;
        uint32_t maker = 0;  // a path this scan added: the thread that did
        std::string own;     // and its path
    };

private:
    void parse_owned(std::string data);
    Slot* stored_slot(std::string_view path);  // lock-free: stored_ is not resized after parse
    Slot* slot_of(const std::string& path, Peek* seen, bool create);
    Slot* added_slot(const std::string& path, bool create);  // under mu_
    Slot* make_slot(const std::string& path);                // under mu_
    bool racy(const PairKey& key) const;
    bool known_free(Slot& s);              // risk_free() of a slot
    void use(Slot& s, const Entry& e);     // s.next = e
    void free_now(Slot& s);                // record_risk_free() of a slot
    std::string serialize_locked() const;  // serialize() under mu_
    uint64_t late_ = 0;                    // record_risk_free(path) calls (under mu_)
    uint64_t early_at_ = 0;                // late_ when store_early() serialized (under mu_)
    int64_t start_ns_;
    std::string data_;                                   // the loaded file
    std::vector<Slot> stored_;                           // sorted by walk_less
    std::vector<Entry> stored_entries_;                  // theirs, in the same order (an added slot has none)
    mutable std::mutex mu_;                              // guards added_ and its index
    std::deque<Slot> added_;                             // this scan's new paths, in the order met
    std::unordered_map<std::string_view, Slot*> index_;  // added_ by path, built when asked by path
    size_t indexed_ = 0;
    std::atomic<size_t> n_next_{0};
    std::atomic<bool> changed_{false};
};

// A cache file in the session dir (the verdicts, the status snapshots):
// read whole when it is a regular file of the caller's of at most `max`
// bytes (else none), and written 0600 by temp + rename, not fsync'ed (lost
// or torn: recomputed). `what`: the error's text ("writing the ...").
std::optional<std::string> read_session_cache(int dirfd, const char* name, size_t max);
base::Result<void> write_session_cache(int dirfd, const char* name, std::string_view data, const char* what);

}  // namespace capture
