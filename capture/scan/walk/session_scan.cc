#include "capture/scan/walk/session_scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "capture/scan/caches/snapshot.h"
#include "capture/scan/caches/verdicts.h"
#include "capture/scan/layers/layer_starts.h"
#include "capture/scan/walk/scan.h"
#include "capture/scan/walk/session_snapshot.h"
#include "helper/base/child.h"
#include "helper/base/fault.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/step_view.h"
#include "helper/store/layers/steps.h"
#include "helper/store/records/owner_ns.h"
#include "helper/store/records/rename_temps.h"

namespace capture {

namespace {

constexpr size_t kSerializerStack = size_t{1} << 20;

base::Result<void> push_layer(std::vector<base::Fd>* out, const std::string& dir) {
    TRY(base::Fd fd, base::open_at(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    out->push_back(std::move(fd));
    return base::Ok();
}

}  // namespace

base::Result<SessionTrees> open_session_trees(const session::Info& s, const StepRange& range) {
    SessionTrees t;
    // A killed supervisor's rename worker may have left a half-made copy
    // (helper/store/records/rename_temps.h): never reviewed as the agent's. Only
    // while no sandbox runs on the session (its lock free).
    if (s.state != "running") rename_temps::sweep_session(s.dir);
    std::string upper = session::upper_dir(s.dir);
    TRY(int nsteps, steps::count(s.dir));
    bool against = !range.against.empty();
    std::string extra;  // compare: what A changed and B did not, under B's layers
    if (against) {
        // Two sessions compared: B's stack as it is, over the real tree's
        // state of what only A changed, over A's view.
        TRY(extra, steps::compare_upper(s.dir, range.against, s.meta.target));
        t.flat.reset(new std::string(extra), [](std::string* p) {
            steps::remove_flat(*p);
            delete p;
        });
    }
    {
        // The stack read in place (docs/history.md, "Capture reads the
        // stack"): the live upper over steps N..1, or, for --step(s), step
        // `to` as the top over steps to-1..from.
        int first = steps::first_layer(s.dir, nsteps);  // below it: squashed steps, no layers
        int top = range.all() ? nsteps : range.to, bottom = std::max(first, range.all() ? 1 : range.from);
        t.step_numbers.push_back(range.all() ? 0 : top);
        if (!range.all()) {
            TRY(std::string path, steps::layer_path(s.dir, top));
            upper = path;
            top--;
        }
        for (int i = top; i >= bottom; i--) {
            t.step_numbers.push_back(i);
            auto l = steps::open_layer(s.dir, i);
            if (!l)
                return base::error("session '" + s.meta.name + "' has an unreadable step " + std::to_string(i) + ": " +
                                   l.error().message);
            t.steps.push_back(std::move(l.value()));
        }
    }
    if (!extra.empty()) {
        TRY_VOID(push_layer(&t.steps, extra));
        t.step_numbers.push_back(-1);
    }
    auto up = base::open_at(AT_FDCWD, upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (!up) return base::error("session '" + s.meta.name + "' has no readable upper layer: " + up.error().message);
    auto low = base::open_at(AT_FDCWD, s.meta.target, O_RDONLY | O_DIRECTORY);
    if (!low)
        return base::error("the session's target " + s.meta.target + " cannot be opened: " + low.error().message +
                           "; restore it, or discard the session");
    t.upper = std::move(up.value());
    t.lower = std::move(low.value());
    if (against) {
        TRY(int below, steps::count(range.against));
        TRY(base::Fd view, steps::open_view(range.against, below, s.meta.target, true));
        t.lower = std::move(view);
    } else if (range.from > 1) {
        TRY(base::Fd view, steps::open_view(s.dir, range.from - 1, s.meta.target));
        t.lower = std::move(view);
    }
    return t;
}

std::function<int64_t(uint32_t)> SessionTrees::layer_starts(const session::Info& s) const {
    return capture::layer_starts(s.dir, step_numbers);
}

std::vector<int> SessionTrees::layers() const {
    std::vector<int> out{upper.get()};
    for (const auto& l : steps) out.push_back(l.get());
    return out;
}

std::vector<std::shared_ptr<const LayerIndex>> index_session_layers(const session::Info& s, const SessionTrees& t) {
    std::vector<int> frozen{-1};                   // the upper: live, or a --step range's top (not worth a file)
    size_t n = t.steps.size() - (t.flat ? 1 : 0);  // compare's layer is no step
    for (size_t i = 0; i < t.steps.size(); i++) frozen.push_back(i < n ? t.steps[i].get() : -1);
    if (n == 0) return std::vector<std::shared_ptr<const LayerIndex>>(frozen.size());  // no steps: nothing to read
    base::Fd dir(::open(s.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir.valid()) return std::vector<std::shared_ptr<const LayerIndex>>(frozen.size());
    return index_layers(dir.get(), frozen);
}

int SessionTrees::holder_of(const Change& c) const {
    if (c.layer == 0) return upper.get();
    return c.layer <= steps.size() ? steps[c.layer - 1].get() : -1;
}

namespace {

// status's snapshot (capture/scan/caches/snapshot.h): wanted for an ended
// session's whole stack; `gen` and `inputs` read before the walk, `got`
// the snapshot used instead of it.
struct SnapshotUse {
    bool want = false;
    std::optional<uint64_t> gen;
    std::string inputs;
    StatusSnapshot got;
    bool used = false;
};

// Before the walk: the generation (unlocked: no writer holds the session),
// the inputs, and the stored snapshot if every key still holds.
void try_snapshot(const session::Info& s, const SessionTrees& t, const ScanOptions& so, const IgnoreOptions& ignore,
                  int dirfd, SnapshotUse* use) {
    use->gen = session::read_gen(dirfd);
    if (!use->gen || session::is_locked(s.dir)) {
        use->want = false;
        return;
    }
    use->inputs = status_inputs(s, so.summary_only, ignore, dirfd);
    StatusSnapshot snap;
    if (!load_snapshot(dirfd, !so.summary_only, &snap) || snap.gen != *use->gen || snap.inputs != use->inputs) return;
    int threads = ::sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
    if (!snapshot_keys_hold(snap.keys, t.upper.get(), t.lower.get(), threads)) return;
    use->got = std::move(snap);
    use->used = true;
}

// The walk of a session's trees as `status` makes it, in the owner user
// namespace: `so` holds the caller's choices (summary_only, count_only,
// reader), the rest comes from the session.
base::Result<ScanResult> walk_session(const session::Info& s, ScanOptions so, const IgnoreOptions& ignore,
                                      const StepRange& range, StatusCache* keep, SnapshotUse* snap = nullptr) {
    ScanResult scan;
    TRY_VOID(as_owner_here([&]() -> base::Result<void> {
        TRY(SessionTrees opened, open_session_trees(s, range));
        auto shared = std::make_shared<SessionTrees>(std::move(opened));
        const SessionTrees& t = *shared;
        if (keep) keep->trees = shared;
        so.session_start_ns = session::began_ns(s.meta);
        so.layer_start = t.layer_starts(s);
        session::FirstCopiesOnce first_copies(s.dir, session::unnoted_since(s.meta));
        so.first_copies = &first_copies;
        so.excluded = s.meta.hidden;
        TRY(base::IgnoreRules rules, load_ignore_rules(t.lower.get(), s.meta.target, ignore));
        so.ignore = &rules;
        so.include_ignored = ignore.include_ignored;
        // Marked as save's base records mark them (show, diff): a stale copy.
        session::KnownBasesOnce known(s.dir);
        // Not between two sessions: the lower is the other session's view,
        // whose times say nothing of when this one copied a file up.
        so.mark_stale = range.against.empty();
        so.known_bases = &known;
        // Verdicts are reused only once nothing can write the upper layer
        // (docs/design.md, "The verdict cache").
        StatusCache local;
        StatusCache& cache = keep ? *keep : local;
        if (s.state != "running" && s.state != "crashed" && range.all() && range.against.empty())
            cache.dir.reset(::open(s.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        PathKey rules_key, root_key;
        if (snap && snap->want && cache.dir.valid()) {
            try_snapshot(s, t, so, ignore, cache.dir.get(), snap);
            if (snap->used) return base::Ok();
            // Taken before the walk reads them: a change during it misses next time.
            so.record_keys = snap->want;
            rules_key = ignore_file_key(t.lower.get());
            root_key = upper_root_key(t.upper.get());
        }
        if (cache.dir.valid()) {
            struct timespec now {};
            ::clock_gettime(CLOCK_REALTIME, &now);
            cache.verdicts =
                std::make_unique<VerdictCache>(static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec);
            cache.verdicts->load(cache.dir.get());
            so.verdicts = cache.verdicts.get();
        }
        auto indexes = index_session_layers(s, t);
        for (const auto& x : indexes) so.indexes.push_back(x.get());
        TRY(scan, scan_layers(t.layers(), t.lower.get(), so));
        if (keep && keep->store_early && cache.verdicts) {
            // Nothing but the risk marks' record_risk_free(path) changes the cache now.
            auto job = [&cache] { (void)cache.verdicts->store_early(cache.dir.get()); };
            cache.early = std::make_unique<base::StackThread>();
            if (!cache.early->start(job, kSerializerStack)) cache.early.reset();
        }
        if (so.record_keys) {
            scan.keys.real.push_back(std::move(rules_key));
            scan.keys.dirs.insert(scan.keys.dirs.begin(), std::move(root_key));
        }
        if (!keep) local.store();
        return base::Ok();
    }));
    return scan;
}

}  // namespace

base::Result<std::vector<Change>> session_changes_as_owner(const session::Info& s, bool summary_only,
                                                           std::vector<std::string>* excluded_seen,
                                                           const IgnoreOptions& ignore, uint64_t* ignored,
                                                           const StepRange& range, StatusCache* keep,
                                                           ContentReader* reader) {
    ScanOptions so;
    so.summary_only = summary_only;
    so.reader = reader;
    so.changes_apart = true;
    // Room in the walk's one line for the changes the run's exit counted
    // (capped: a guess too big only reserves address space, but not without bound).
    if (s.meta.changes > 0) so.changes_hint = std::min<size_t>(s.meta.changes + s.meta.changes / 8 + 64, 1 << 20);
    SnapshotUse snap;
    // Only for a caller that keeps the cache (status), of a whole ended session.
    snap.want = keep && s.state != "running" && s.state != "crashed" && range.all() && range.against.empty();
    struct timespec start {};
    ::clock_gettime(CLOCK_REALTIME, &start);
    TRY(ScanResult scan, walk_session(s, so, ignore, range, keep, &snap));
    if (snap.used) {
        keep->from_snapshot = true;
        if (ignored) *ignored = snap.got.ignored;
        if (excluded_seen) *excluded_seen = std::move(snap.got.excluded_seen);
        return std::move(snap.got.changes);
    }
    if (ignored) *ignored = scan.ignored;
    std::vector<Change> out = take_changes(&scan);
    // Kept only when no writer came meanwhile (the generation read before
    // the walk, no lock now) and no key is racy.
    int64_t start_ns = static_cast<int64_t>(start.tv_sec) * 1000000000 + start.tv_nsec;
    // (The tests stop here to bump the generation, as a writer would, mid-walk.)
    if (snap.want && !base::fault_point("status", "walked")) snap.want = false;
    if (snap.want && snap.gen && keep->dir.valid() && !snapshot_racy(scan.keys, start_ns) &&
        !session::is_locked(s.dir) && session::read_gen(keep->dir.get()) == snap.gen) {
        StatusSnapshot head;
        head.gen = *snap.gen;
        head.inputs = std::move(snap.inputs);
        head.ignored = scan.ignored;
        head.excluded_seen = scan.excluded_seen;
        head.keys = std::move(scan.keys);
        keep->snapshot_full = !summary_only;
        // `out`'s buffer moves with it to the caller; it reads, and joins before changing it.
        auto job = [keep, h = std::make_shared<StatusSnapshot>(std::move(head)), list = std::span<const Change>(out)] {
            keep->snapshot = serialize_snapshot(*h, list);
        };
        keep->serializer = std::make_unique<base::StackThread>();
        if (!keep->serializer->start(job, kSerializerStack)) {
            keep->serializer.reset();
            job();
        }
    }
    if (excluded_seen) *excluded_seen = std::move(scan.excluded_seen);
    return out;
}

void StatusCache::finish_snapshot() {
    if (serializer) serializer->join();
    serializer.reset();
}

void StatusCache::store() {
    // Best effort: a cache that cannot be written is recomputed next time.
    // The verdicts first, while the snapshot may still be serialized.
    bool early_done = early != nullptr;
    if (early) early->join();
    if (verdicts && dir.valid() && (early_done ? verdicts->late_since_early() : verdicts->dirty()))
        (void)verdicts->store(dir.get());
    finish_snapshot();
    if (!snapshot.empty() && dir.valid()) (void)store_snapshot(dir.get(), snapshot_full, snapshot);
}

base::Result<int64_t> count_changes_in_child(const session::Info& s, bool note_fresh) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return base::sys_error("pipe");
    base::Fd rd(p[0]), wr(p[1]);
    auto child = base::spawn([&]() -> int {
        rd.reset();
        // Counted, not listed: no change is kept (docs/performance.md,
        // "The real project's run, the exit").
        ScanOptions so;
        so.summary_only = true;
        so.count_only = true;
        so.note_fresh = note_fresh;
        auto r = walk_session(s, so, {}, {}, nullptr);
        if (!r) return 1;
        if (!r->fresh.empty()) {
            // Best effort: without them a later touch of those files is a
            // stale copy, as before.
            session::KnownBases fresh;
            for (auto& [path, known] : r->fresh) fresh[path].insert(std::move(known));
            (void)session::add_known_bases(s.dir, fresh);
        }
        int64_t n = static_cast<int64_t>(r->counted);
        return base::write_all(wr.get(), &n, sizeof n).ok() ? 0 : 1;
    });
    wr.reset();
    if (!child) return child.error();
    int64_t n = -1;
    auto got = base::read_all(rd.get(), sizeof n);
    TRY(int status, child->wait());
    if (!got.ok() || got->size() != sizeof n || base::exit_code_of(status) != 0)
        return base::error("counting the session's changes failed");
    std::memcpy(&n, got->data(), sizeof n);
    return n;
}

void recount_changes(const session::Info& s) {
    auto n = count_changes_in_child(s);
    (void)session::set_changes(s.dir, n.ok() ? n.value() : -1);
}

std::vector<std::pair<std::string, uint64_t>> hard_linked_on_real(const std::vector<Change>& changes) {
    std::vector<std::pair<std::string, uint64_t>> out;
    // The walk's own stat of the real file (fd-relative, no symlink followed).
    for (const auto& c : changes)
        if (c.kind == Kind::Modified && c.type == Type::File && c.old_type == Type::File && c.old_nlink > 1)
            out.emplace_back(c.path, c.old_nlink);
    return out;
}

}  // namespace capture
