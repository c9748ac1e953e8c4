#include "review/prompt/walk_conflicts.h"

#include <cstdio>
#include <vector>

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

namespace {

// The conflicts at `path` and beneath it (a directory the change deletes or
// replaces), in path order: the names sort "a", "a.b", "a/b", so the ones
// beneath are the range from "a/" up to "a0" ('0' follows '/').
std::vector<const Conflict*> at_or_beneath(const std::string& path, const WalkConflicts& all) {
    std::vector<const Conflict*> out;
    if (auto it = all.find(path); it != all.end()) out.push_back(&it->second);
    for (auto it = all.lower_bound(path + "/"), end = all.lower_bound(path + "0"); it != end; ++it)
        out.push_back(&it->second);
    return out;
}

}  // namespace

ConflictStep conflict_step(const std::string& path, const WalkOptions& o) {
    if (!o.conflicts || o.conflicts->empty()) return ConflictStep::None;
    std::vector<const Conflict*> found = at_or_beneath(path, *o.conflicts);
    if (found.empty()) return ConflictStep::None;
    // Each one beneath is named (up to 3, then how many more): y to the
    // whole question overwrites them all (attack30: only the first was said).
    Conflict c = *found.front();
    std::string where = base::display_path(path);
    std::vector<std::string> under;
    for (const Conflict* f : found) {
        c.hard = c.hard || f->hard;
        if (f->reason != found.front()->reason && !c.reason.ends_with(", and other changes"))
            c.reason += ", and other changes";
        if (f->path != path) under.push_back(f->path);
    }
    if (!under.empty()) {
        where += " (";
        for (size_t i = 0; i < under.size() && i < 3; ++i) where += (i ? ", " : "") + base::display_path(under[i]);
        if (under.size() > 3) where += ", and " + std::to_string(under.size() - 3) + " more";
        where += " beneath it)";
    }
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
