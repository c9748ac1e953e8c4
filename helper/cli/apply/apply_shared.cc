// What `apply` and `undo` share (helper/cli/apply/apply_shared.h).
#include "helper/cli/apply/apply_shared.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "helper/base/json/bytes.h"
#include "helper/base/text.h"

namespace cli {

namespace {

using json = nlohmann::json;

}  // namespace

// --opt VALUE or --opt=VALUE.
bool take_value(int argc, char** argv, int& i, const char* name, std::string* out) {
    size_t n = std::strlen(name);
    if (std::strncmp(argv[i], name, n) != 0) return false;
    if (argv[i][n] == '=') {
        *out = argv[i] + n + 1;
    } else if (argv[i][n] != '\0') {
        return false;
    } else {
        *out = i + 1 < argc ? argv[++i] : "";
    }
    // An empty value (`--target "$UNSET"`) is no value: never the default.
    if (out->empty()) *out = "\x01";  // missing value marker
    return true;
}

// Relative paths are taken from the caller's working directory.
void absolute(std::string* path) {
    if (path->empty() || *path == "\x01") return;
    if ((*path)[0] != '/') {
        char cwd[4096];
        if (!::getcwd(cwd, sizeof cwd)) return;
        *path = std::string(cwd) + "/" + *path;
    }
    // What a person types and means one way: `--target .`, the `dir/` of a
    // shell's completion, `a//b`. A `..` is kept (symlinks make it
    // ambiguous): the target rules refuse it.
    *path = base::clean_path(*path);
}

namespace {

// with_forceable: each conflict says whether --force overrides it (a caller
// such as the Python bindings names --force as the fix only when it helps).
json conflicts_json(const std::vector<review::Conflict>& cs, bool with_forceable) {
    json a = json::array();
    for (const auto& c : cs) {
        json o = base::json::path_object(c.path);
        o["reason"] = c.reason;
        if (with_forceable) o["forceable"] = !c.hard;
        a.push_back(std::move(o));
    }
    return a;
}

json paths_json(const std::vector<std::string>& paths) {
    json a = json::array();
    for (const auto& p : paths) a.push_back(base::json::path_object(p));
    return a;
}

}  // namespace

// running: a dry run of a session still running (its changes so far), said as "running": true.
void print_json(const review::ApplyReport* rep, const std::string& err, bool dry_run, uint64_t ignored, bool running) {
    json o = {{"applied", rep ? paths_json(rep->applied) : json::array()},
              {"ignored", ignored},
              {"undo", rep && !rep->undo.empty() ? json(rep->undo) : json(nullptr)},
              {"conflicts", rep ? conflicts_json(rep->conflicts, true) : json::array()},
              {"error", err.empty() ? json(nullptr) : json(err)},
              {"dry_run", dry_run}};
    if (running) o["running"] = true;
    if (rep) {
        o["forced"] = conflicts_json(rep->forced, false);
        o["skipped"] = paths_json(rep->skipped);
        o["recovered"] = rep->recovered.empty() ? json(nullptr) : json(rep->recovered);
        o["undo_patch"] = rep->undo_patch.empty() ? json(nullptr) : json(rep->undo_patch);
        o["undo_pruned"] = rep->pruned.count;
        json partial = json::array();
        for (const auto& p : rep->partial) {
            json e = base::json::path_object(p.path);
            e["hunks"] = p.hunks;
            e["of"] = p.of;
            partial.push_back(std::move(e));
        }
        o["partial"] = std::move(partial);
        o["already"] = paths_json(rep->already);
        o["merged"] = paths_json(rep->merged);
        o["marked"] = paths_json(rep->marked);
        json mc = json::array();
        for (const auto& f : rep->merge_conflicts) {
            json e = base::json::path_object(f.path);
            json ranges = json::array();
            for (const auto& r : f.ranges)
                ranges.push_back({{"base", {r.base.first, r.base.count}},
                                  {"target", {r.ours.first, r.ours.count}},
                                  {"patch", {r.theirs.first, r.theirs.count}}});
            e["ranges"] = std::move(ranges);
            mc.push_back(std::move(e));
        }
        o["merge_conflicts"] = std::move(mc);
    }
    // ensure_ascii: every non-ASCII character as \uXXXX, so that even a dump
    // to a terminal is inert (C1 and bidi controls in names included).
    std::cout << o.dump(-1, ' ', true, json::error_handler_t::replace) << std::endl;
}

void print_conflicts(const char* verb, const review::ApplyReport& rep, const std::string& what, bool forced) {
    std::fprintf(stderr, "layover: %s: %zu conflict%s; nothing was %s:\n", verb, rep.conflicts.size(),
                 rep.conflicts.size() == 1 ? "" : "s", what.c_str());
    // Some conflicts --force overrides and some it does not: the second kind
    // is marked, so that the fix line's --force is not a circle for them.
    size_t n_hard = std::count_if(rep.conflicts.begin(), rep.conflicts.end(), [](const auto& c) { return c.hard; });
    bool mixed = !forced && n_hard > 0 && n_hard < rep.conflicts.size();
    bool git_index = false;
    for (const auto& c : rep.conflicts) {
        std::fprintf(stderr, "  %s: %s%s\n", base::display_path(c.path).c_str(), c.reason.c_str(),
                     mixed && c.hard ? " [--force does not override this]" : "");
        git_index |= c.path == ".git/index" || c.path.ends_with("/.git/index");
    }
    // `git status`, `git diff` and most other git commands rewrite the index
    // (its stat cache) with nothing staged: the commonest conflict after an
    // apply of commits, named so that --force is not a guess.
    if (git_index)
        std::fprintf(stderr,
                     "note: .git/index is git's staging area, which 'git status' and most git commands rewrite "
                     "even when nothing was staged; if you staged nothing since, --force is safe for it\n");
    // Advice names only flags this verb accepts: undo has no --exclude/--only.
    // With --force given, naming it again sends the user round in a circle.
    // Every conflict one --force does not override: naming it sends the user round in a circle too.
    bool hard = std::all_of(rep.conflicts.begin(), rep.conflicts.end(), [](const auto& c) { return c.hard; });
    forced |= hard && !rep.conflicts.empty();
    if (forced && std::string(verb) == "undo")
        std::fprintf(stderr, "fix: --force does not override these; look at those paths and put back what they need\n");
    else if (forced)
        std::fprintf(stderr,
                     "fix: --force does not override these (a parent directory gone or replaced, a hunk chosen on\n"
                     "     other content); put back what they need, or leave them out with --exclude GLOB / pick\n"
                     "     others with --only PATH\n");
    else if (mixed && std::string(verb) == "undo")
        std::fprintf(stderr,
                     "fix: look at those paths; put back what the %zu marked need, then re-run with --force to "
                     "restore over the others anyway\n",
                     n_hard);
    else if (mixed)
        std::fprintf(stderr,
                     "fix: look at those paths; --force overwrites all but the %zu marked (put back what they need,\n"
                     "     or leave them out with --exclude GLOB / pick others with --only PATH)\n",
                     n_hard);
    else if (std::string(verb) == "undo")
        std::fprintf(stderr, "fix: look at those paths; then re-run with --force to restore over them anyway\n");
    else
        std::fprintf(stderr,
                     "fix: look at those paths; then re-run with --force to overwrite them (the current versions are\n"
                     "     kept for undo), or leave them out with --exclude GLOB / pick others with --only PATH\n");
}

void note_markers_unmergeable(const review::ApplyReport& rep, bool markers) {
    if (!markers) return;
    size_t stale = 0;
    for (const auto& c : rep.conflicts) stale += c.reason.ends_with("(stale copy)") ? 1 : 0;
    if (stale == 0) return;
    std::fprintf(stderr,
                 "note: --conflict=markers merges a file with the original a saved patch carries; a stale copy "
                 "(the real file changed after the sandbox's version was made) has none to merge with, so it stays a "
                 "conflict: compare it with 'layover diff', then --force or --exclude it\n");
}

void print_notes(const char* verb, const review::ApplyReport& rep) {
    if (!rep.recovered.empty()) std::fprintf(stderr, "layover: %s: %s\n", verb, rep.recovered.c_str());
    for (const auto& c : rep.forced)
        std::fprintf(stderr, "layover: %s: overriding conflict (--force): %s: %s\n", verb,
                     base::display_path(c.path).c_str(), c.reason.c_str());
    for (const auto& p : rep.skipped)
        std::fprintf(stderr,
                     "layover: %s: not applied (not stored: a socket, or a real dir holding a hidden path): %s\n", verb,
                     base::display_path(p).c_str());
    if (!rep.already.empty()) {
        std::string names;
        for (size_t i = 0; i < rep.already.size() && i < 5; i++)
            names += (i ? ", " : "") + base::display_path(rep.already[i]);
        if (rep.already.size() > 5) names += ", ... (" + std::to_string(rep.already.size()) + " in all)";
        std::fprintf(stderr, "layover: %s: already on the target as the patch makes them, so left as they are: %s\n",
                     verb, names.c_str());
    }
}

}  // namespace cli
