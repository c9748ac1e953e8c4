// The walk behind scan_upper/scan_layers (capture/scan/walk/scan.h), internal to
// capture/scan: one Walker per thread of a scan. Its methods live by
// concern: walker.cc (an upper dir's entries, each classified and
// recorded), walker_real.cc (the real side: deletions and, for save, the
// base records), walker_pieces.cc (a dir split between two threads).
#pragma once
#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "capture/scan/caches/verdicts.h"
#include "capture/scan/entry/classify.h"
#include "capture/scan/entry/look.h"
#include "capture/scan/entry/stale.h"
#include "capture/scan/layers/stack.h"
#include "capture/scan/walk/scan.h"
#include "helper/base/clock.h"
#include "helper/base/dir.h"
#include "helper/base/result.h"

namespace capture {

inline int64_t ns_of(const struct statx_timestamp& t) { return base::time_ns(t.tv_sec, t.tv_nsec); }

inline StatKey stat_key(const struct statx& st) {
    StatKey k;
    k.dev = (static_cast<uint64_t>(st.stx_dev_major) << 32) | st.stx_dev_minor;
    k.ino = st.stx_ino;
    k.size = st.stx_size;
    k.mtime_ns = ns_of(st.stx_mtime);
    k.ctime_ns = ns_of(st.stx_ctime);
    return k;
}

// What stat_key() takes from a statx.
constexpr unsigned kKeyMask = STATX_INO | STATX_SIZE | STATX_MTIME | STATX_CTIME;

using DirEnt = base::DirEntry;

// A real dir's entries, the error naming `what`.
base::Result<std::vector<DirEnt>> list_real_dir(int dirfd, const std::string& what);

// A dir that hides its real counterpart (opaque, cut off by a step, or below
// such a dir): the real entries it lacks are deletions (capture/scan/entry/gone.h).
struct Hiding {
    int64_t since = 0;          // the hiding dir's copy-up time (staleness of what it deleted)
    std::vector<DirEnt> lower;  // the real dir's entries
};

class Walker {
public:
    Walker(const ScanOptions& o, ScanResult* out);
    Walker(const Walker&) = delete;
    Walker& operator=(const Walker&) = delete;

    // hide: the dir hides the real dir `low` (Hiding), or null.
    base::Result<void> dir(const UpperDir& up, int low, const std::string& prefix, const Hiding* hide = nullptr);

    // A second walker may take pieces of one dir (spare_cpu).
    bool spare_cpu = false;
    // The ctime of the real dir being walked (ns; 0: none): only in one
    // changed since the session began can a real file have gone
    // (file_copied_from_real). Unknown: as if it had changed.
    int64_t real_dir_ns = INT64_MAX;

private:
    // Pieces of the split dir: enough that two walkers taking the next one
    // as they finish end within a piece of each other (two halves ended
    // 60-230 ms apart in a 10,000-file save; 16 pieces of its 100 dirs left
    // a status's two threads up to a piece, ~9 ms of CPU, apart).
    static constexpr size_t kPieces = 64;

    // The dir being walked.
    struct Here {
        const UpperDir& up;
        int low;
        const std::string& prefix;
        const UpperListing& names;
        const Hiding* hide;
        const std::vector<std::string>* gone = nullptr;  // with hide: the real entries the upper lacks
    };

    // Upper entries [from, to), and in name order among them the real
    // entries a hiding dir lacks (gone_span shares those out between halves).
    base::Result<void> entries(const Here& h, size_t from, size_t to);

    // A real entry that a hiding dir lacks: deleted, as a whiteout there
    // would have deleted it. Its layer (the writer finds the parent dir
    // there; blame's step) is the lowest the merged dir reaches: the one
    // that cut it off from the real tree.
    base::Result<void> gone_entry(const Here& h, const std::string& name);

    // Is a hidden path strictly beneath `path`? A real dir holding one (made
    // there after the run, when nothing covered it) is never deleted whole.
    bool hidden_beneath(const std::string& path) const;

    // A real dir the upper deleted (or lacks) that holds a hidden path: it
    // stays, and each real entry in it is deleted in its place, the hidden
    // ones never (a deletion of the dir would take the hidden path with it).
    base::Result<void> gone_around_hidden(int low, const std::string& prefix, int64_t since, uint32_t layer);

    base::Result<void> gone_at(int low, const std::string& prefix, const std::string& name, int64_t since,
                               uint32_t layer);

    // The first dir with two or more subdirs is split (once); empty: not here.
    std::vector<size_t> split_points(const std::vector<DirEnt>& names);

    // The pieces of one dir, each walked by a walker of its own into its own
    // result, two at a time (this thread and one more, each taking the next
    // piece), then appended to ours in piece order: the walk order stays.
    base::Result<void> in_pieces(const Here& h, const std::vector<size_t>& cuts);

    // When the session copied the real entry up: the upper entry's birth,
    // or Seen::first_ns (the session start where btime is missing).
    int64_t copyup_ns(const Seen& u) const;

    // A file, symlink or whiteout over a real entry that changed after the
    // session began but before the upper entry was born: the upper entry
    // may have been made anew (`sed -i` renames a new file over the copy,
    // `rm` and remake, `ln`), or deleted, after a copy the session had
    // earlier; likewise a dir hiding a real dir, and an entry inside
    // a hiding dir (parent_hide). Sets u->first_ns to when the session
    // first had the path (capture/scan/walk/walker_since.cc).
    void settle_first_copy(const UpperDir& stack, const UpperListing& ls, size_t index, const std::string& name,
                           const std::string& path, Seen* u, const Seen& l, const Hiding* parent_hide) const;
    // path: the entry's (a name a rename or a link made counts from its
    // layer); real_born: the real file's birth (-1: none known).
    int64_t first_copy(const UpperDir& stack, const UpperListing& ls, size_t index, const std::string& name,
                       const std::string& path, int64_t real_born) const;
    // A dir where the real tree has none: was its lowest layer's dir copied
    // up from a real dir at this path (then gone since)?
    bool copied_from_real(const UpperDir& stack, const UpperListing& ls, size_t index, const std::string& name) const;
    // A file where the real tree has none: was it copied up at this path
    // (marked, at no name a rename or a link made), from a real file gone since?
    bool file_copied_from_real(const UpperDir& stack, const UpperListing& ls, size_t index, const std::string& name,
                               const std::string& path, const Seen& u) const;
    // A file or symlink where the real tree has nothing: the known content
    // (helper/store/records/known_bases.h) its path had when a run's exit or an
    // apply saw it, or null: the real entry was never known there.
    const std::string* known_gone(const Seen& u, const std::string& path) const;
    // Its base record: that content, stale (apply: a conflict, "removed from
    // the target"), never absent (apply would bring the file back).
    static BaseEntry gone_base(const std::string& path, Type type, const std::string& known);
    static BaseEntry absent_base(const std::string& path);

    base::Result<BaseEntry> base_of(const Seen& l, const std::string& path, int64_t copied, bool* text = nullptr);

    // status (ScanOptions::mark_stale): the change's real entry, as base_of
    // would judge it; its content is read only when a known base may clear it.
    void mark_stale(const Seen& u, const Seen& l, int low, const std::string& name, const std::string& path);

    // run's exit (ScanOptions::note_fresh): the real side's fingerprint, if
    // it is still what was copied up, into ScanResult::fresh.
    void note_fresh(const Seen& u, const Seen& l, int low, const std::string& name, const std::string& path);
    uint64_t fresh_bytes_ = 0;  // read by note_fresh (its budget)

    // Paths are unique except where a real subtree record (added first, when
    // its dir is recorded) meets an upper entry's absent record below an
    // opaque dir: only subtree paths need remembering.
    void add_base(BaseEntry b, bool subtree = false);

    // Every entry below a deleted or replaced real dir, so apply notices an
    // edit deep inside.
    base::Result<void> lower_subtree(int low, const std::string& prefix, int64_t copied);

    base::Result<void> entry(const UpperDir& stack, const UpperListing& ls, size_t index, int low,
                             const std::string& prefix, const Hiding* parent_hide);

    // Is the file at `path` likely to be read by the content reader? Then
    // the walk opens it rather than only stat'ing it. Not when the verdict
    // cache knows it (risk-free, or an unchanged copy): a repeated status
    // opens nothing.
    bool will_read(const std::string& path) const;

    // The change just recorded, for the content reader: from the fd the walk
    // stat'ed, or opened here (a file typed from d_type, or only stat'ed)
    // and checked to be that file. Left NotRead when it cannot be opened:
    // the risk scan then reads it by path, as it reads the rest.
    void read_content(int up, const std::string& up_name, int low, const std::string& name, const Seen& u);

    // An entry the ignore rules match (its parents were not ignored: the walk
    // does not descend into an ignored dir). The root's rules file never is.
    bool is_ignored(const Seen& u, const Seen& l, const std::string& path) const;

    // Entries below an ignored upper dir (names only: no stat each).
    uint64_t count_below(const UpperDir& d, const std::string& prefix);

    base::Result<void> record(Seen& u, Seen& l, const Verdict& v, const std::string& path, bool ignored,
                              uint32_t layer);
    // ScanOptions::record_keys: a real entry's key (or absent), and a dir
    // of the topmost layer's (its stat, taken on its fd when look() took none).
    void key_real(const std::string& path, const Seen& l);
    void key_dir(const std::string& path, const Seen& u, int fd);
    void key_ignored_dir(const std::string& path, int fd);
    // The file's stats noted in the verdict cache (status's risk marks);
    // true: it knows the file risk-free at them.
    bool note_stats(const Seen& u, const Seen& l, const std::string& path);

    const ScanOptions& opts_;
    ScanResult* out_;
    std::unordered_set<std::string> excluded_;
    // Kept files never take fds the walk needs: each level open holds up to
    // two dir fds (upper and real), and a deeper level gives back the most
    // recently kept files (the writer then opens those again).
    static constexpr uint64_t kMaxKept = 65536;
    static constexpr uint64_t kSpare = 1024;  // entries being looked at, zstd, stdio
    struct Level {
        Walker* w;
        explicit Level(Walker* walker) : w(walker) {
            w->counts_->levels++;
            while (!w->kept_items_.empty() && w->room() < 0) {
                Kept k = w->kept_items_.back();
                Item& it = w->out_->items[k.item];
                (k.base ? it.base_file : it.fd).reset();
                w->kept_items_.pop_back();
                --w->counts_->kept;
            }
        }
        ~Level() { w->counts_->levels--; }
    };
    int64_t room() const {
        // Files kept and levels open by every walker of this scan.
        uint64_t used = counts_->kept + 2 * counts_->levels + kSpare;
        return static_cast<int64_t>(fd_limit_) - static_cast<int64_t>(used);
    }
    uint64_t fd_limit_ = 0;  // 0: keep nothing (a small limit)
    // Shared by the walkers of a split dir: the fds they hold between them.
    struct Counts {
        std::atomic<uint64_t> kept{0};               // files kept open (Item::fd)
        std::atomic<uint64_t> levels{0};             // dir levels open (up to two fds each)
        std::atomic<uint64_t> path_bytes{0};         // of every entry's path looked at (kMaxPathBytes)
        std::atomic<uint64_t> ignored_key_bytes{0};  // of the dirs keyed below ignored ones
    };
    Counts own_counts_;
    Counts* counts_ = &own_counts_;
    bool in_ignored_ = false;    // below an ignored dir (with include_ignored)
    bool in_gone_real_ = false;  // below a dir copied up from a real dir gone since (Seen::gone_real)
    VerdictCache::Peek peek_;    // the cache's slot of the entry being looked at (a file)
    // Each kept file, in the order kept: its item (index in out_->items), and
    // whether it is that item's base_file rather than its fd.
    struct Kept {
        size_t item;
        bool base;
    };
    std::vector<Kept> kept_items_;
    // Keeps `fd` as the last item's fd or base_file, when the fd budget allows.
    void keep(base::Fd* fd, bool base);
    std::set<std::string> seen_base_;
};

}  // namespace capture
