// A dir split between the walk's two threads (capture/scan/walk/walker.h).
#include <atomic>
#include <memory>
#include <mutex>

#include "capture/scan/walk/walker.h"
#include "helper/base/thread.h"

namespace capture {

using base::Result;

// The first dir with two or more subdirs is split (once); empty: not here.
std::vector<size_t> Walker::split_points(const std::vector<DirEnt>& names) {
    if (!spare_cpu) return {};
    std::vector<size_t> cuts = base::split_by_subdirs(names, kPieces);
    if (!cuts.empty()) spare_cpu = false;
    return cuts;
}

// The pieces of one dir, each walked by a walker of its own into its own
// result, two at a time (this thread and one more, each taking the next
// piece), then appended to ours in piece order: the walk order stays.
Result<void> Walker::in_pieces(const Here& h, const std::vector<size_t>& cuts) {
    size_t n = cuts.size() + 1;
    std::vector<ScanResult> results(n);
    std::vector<std::unique_ptr<Walker>> walkers;
    for (size_t i = 0; i < n; i++) {
        auto w = std::make_unique<Walker>(opts_, &results[i]);
        w->fd_limit_ = fd_limit_;
        w->counts_ = counts_;
        w->in_ignored_ = in_ignored_;
        w->in_gone_real_ = in_gone_real_;
        w->real_dir_ns = real_dir_ns;
        // What this walker already recorded: the real subtree of an opaque
        // dir above the split, which the pieces' "absent" records must not repeat.
        w->seen_base_ = seen_base_;
        walkers.push_back(std::move(w));
    }
    std::vector<Result<void>> rs(n, base::Ok());
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    // changes_apart: the pieces' changes go into one line, in piece order,
    // as the pieces before them are in it (a piece that ends early waits as
    // its items), moved out of the items by the thread that ends the piece.
    // Reserved for ScanOptions::changes_hint, take_changes() hands the line
    // on as the list: no second list of 10,000 changes (docs/performance.md,
    // "Status: one list of changes").
    std::vector<Change> line;
    std::mutex line_mutex;
    std::vector<char> ended(n, 0);
    size_t lined = 0;
    if (opts_.changes_apart) line.reserve(opts_.changes_hint);
    auto to_line = [&](size_t i) {
        std::lock_guard<std::mutex> hold(line_mutex);
        for (ended[i] = 1; lined < n && ended[lined]; lined++) {
            append_changes(&results[lined], &line);
            std::vector<Item>().swap(results[lined].items);
        }
    };
    auto take = [&] {
        for (size_t i; !failed && (i = next++) < n;) {
            size_t from = i == 0 ? 0 : cuts[i - 1], to = i + 1 < n ? cuts[i] : h.names.names.size();
            rs[i] = walkers[i]->entries(h, from, to);
            if (!rs[i]) failed = true;
            if (opts_.changes_apart && rs[i]) to_line(i);
        }
        return !failed;
    };
    base::run_halves(take, [&] { take(); });
    for (const auto& r : rs)
        if (!r) return r;
    // One allocation for all the pieces' items: growing by doubling moved
    // every Item already there again (~5% of a 10,000-file save's main thread).
    size_t more = 0, real = 0, dirs = 0;
    for (const auto& r : results) {
        more += r.items.size();
        real += r.keys.real.size();
        dirs += r.keys.dirs.size();
    }
    if (!opts_.changes_apart) out_->items.reserve(out_->items.size() + more);
    // The snapshot's keys likewise (one per real entry looked at), and one
    // more: status appends the ignore file's key after the walk (a full
    // vector moved all 10,000 again).
    out_->keys.real.reserve(out_->keys.real.size() + real + 1);
    out_->keys.dirs.reserve(out_->keys.dirs.size() + dirs);
    if (!line.empty()) out_->pieces.push_back({out_->items.size(), std::move(line)});
    for (size_t i = 0; i < n; i++) {
        ScanResult& theirs = results[i];
        size_t base_index = out_->items.size();
        for (auto& it : theirs.items) out_->items.push_back(std::move(it));
        for (auto& p : theirs.pieces) out_->pieces.push_back({out_->items.size(), std::move(p.changes)});
        // Deduplicated against ours already (seen_base_ above); theirs are new.
        for (auto& b : theirs.base) out_->base.push_back(std::move(b));
        for (auto& x : theirs.excluded_seen) out_->excluded_seen.push_back(std::move(x));
        for (auto& x : theirs.fresh) out_->fresh.push_back(std::move(x));
        for (auto k : {&SnapshotKeys::real, &SnapshotKeys::dirs})
            for (auto& x : theirs.keys.*k) (out_->keys.*k).push_back(std::move(x));
        out_->ignored += theirs.ignored;
        out_->counted += theirs.counted;
        seen_base_.insert(walkers[i]->seen_base_.begin(), walkers[i]->seen_base_.end());
        for (Kept k : walkers[i]->kept_items_) kept_items_.push_back({base_index + k.item, k.base});
    }
    return base::Ok();
}

}  // namespace capture
