#include "review/prompt/walk_conflicts.h"

#include <cstdio>

#include "helper/base/text.h"

namespace review {

WalkConflicts conflicts_before_walk(const capture::Patch& patch, ApplyOptions opts) {
    WalkConflicts out;
    opts.dry_run = true;
    opts.progress = false;
    opts.hunks.clear();
    opts.tap = nullptr;
    opts.before_commit = nullptr;
    auto rep = apply_patch(patch, opts);
    if (!rep.ok()) return out;
    for (auto& c : rep->conflicts) out.emplace(c.path, c);
    for (auto& c : rep->forced) out.emplace(c.path, c);  // --force given: they are overridden
    return out;
}

ConflictStep conflict_step(const std::string& path, const WalkOptions& o) {
    if (!o.conflicts || o.conflicts->empty()) return ConflictStep::None;
    // At the path, or beneath it (a directory the change deletes or replaces).
    auto it = o.conflicts->lower_bound(path);
    if (it == o.conflicts->end()) return ConflictStep::None;
    if (it->first != path && !(it->first.starts_with(path) && it->first[path.size()] == '/')) {
        auto under = o.conflicts->lower_bound(path + "/");
        if (under == o.conflicts->end() || !under->first.starts_with(path + "/")) return ConflictStep::None;
        it = under;
    }
    const Conflict& c = it->second;
    std::string where = base::display_path(path);
    if (c.path != path) where += " (" + base::display_path(c.path) + " beneath it)";
    if (c.hard) {
        std::fprintf(stderr,
                     "layover: %s conflicts with the target: %s [--force does not override this]; left out, not "
                     "asked about (put back what it needs to apply it)\n",
                     where.c_str(), c.reason.c_str());
        return ConflictStep::Skip;
    }
    switch (o.on_conflict) {
        case OnConflict::Skip:
            std::fprintf(stderr,
                         "layover: %s conflicts with the target: %s; apply would refuse it, so it is left out, not "
                         "asked about (run 'apply -p --force' to be asked whether to overwrite it whole)\n",
                         where.c_str(), c.reason.c_str());
            return ConflictStep::Skip;
        case OnConflict::Forced:
            std::fprintf(stderr,
                         "layover: %s conflicts with the target: %s; asked about whole (hunks are never fitted to a "
                         "file that moved): y overwrites the target's version (--force; it is kept for undo)\n",
                         where.c_str(), c.reason.c_str());
            return ConflictStep::Whole;
        case OnConflict::Prompt:
            std::fprintf(stderr,
                         "layover: %s conflicts with the target: %s; asked about whole (hunks are never fitted to a "
                         "file that moved): y takes it whole, and [a] then offers to overwrite the target's version\n",
                         where.c_str(), c.reason.c_str());
            return ConflictStep::Whole;
    }
    return ConflictStep::None;
}

}  // namespace review
