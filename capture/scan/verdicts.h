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
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "helper/base/result.h"

namespace capture {

struct StatKey {
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    bool operator==(const StatKey&) const = default;
};

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

    // Pure: the stored form and back. A malformed or foreign file gives an
    // empty cache (it is only a cache).
    void parse(std::string_view data);
    std::string serialize() const;

    // Thread-safe (the walk may run on two threads).
    std::optional<Cached> find(const std::string& path, const PairKey& key);
    void record(const std::string& path, const PairKey& key, Cached v);
    // The file needs rewriting: a verdict was added, or a stored one was not used.
    bool dirty() const;

    // Content risks. The scan notes each changed file's pair of stats (the
    // real side zero when there is none); note() and then risk_free() say
    // whether the file was read before at those stats and showed no risk
    // (and keep that verdict; the scan sets Change::risk_free_cached from
    // note(), one lookup per file), and record_risk_free() stores that it
    // was read now and showed none (not when racy, as record()). A path
    // never noted is never risk-free. Thread-safe.
    // What the loaded cache holds for a path, looked up before its stat:
    // `known` says a risk-free or a content verdict is stored at some stats
    // (a hint: the walk then only stats the file rather than opening it for
    // the risk read: it was clean, or an unchanged copy, last time), and
    // note(path, key, &peek) reuses the lookup.
    struct Slot;
    struct Peek {
        Slot* slot = nullptr;
        bool known = false;
    };
    Peek peek(const std::string& path);
    bool note(const std::string& path, const PairKey& key, const Peek* seen = nullptr);
    bool risk_free(const std::string& path);
    void record_risk_free(const std::string& path);

    // The session dir's file `verdicts`: read (missing or unreadable: empty),
    // and written atomically (temp + rename, mode 0600).
    void load(int session_dirfd);
    base::Result<void> store(int session_dirfd) const;

private:
    struct Entry {
        PairKey key;
        bool has_verdict = false;  // v holds a content verdict
        Cached v;
        bool risk_free = false;
    };

public:
    // One node per path (one lookup per call: the maps were a third of a
    // repeated status's CPU). Nodes stay put: a Peek may point at one.
    struct Slot {
        Entry stored, next;  // as loaded; used or computed by this scan (what store() writes)
        PairKey noted;
        bool has_stored = false, in_next = false, has_noted = false;
    };

private:
    bool racy(const PairKey& key) const;
    bool known_free(Slot& s);           // risk_free() of a slot, under mu_
    void use(Slot& s, const Entry& e);  // s.next = e
    int64_t start_ns_;
    mutable std::mutex mu_;
    std::unordered_map<std::string, Slot> slots_;
    size_t n_stored_ = 0, n_next_ = 0;
    bool added_ = false;
};

}  // namespace capture
