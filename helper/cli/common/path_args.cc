#include "helper/cli/common/path_args.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "helper/base/glob.h"
#include "helper/base/text.h"

void warn_unmatched(const char* verb, const std::string& target, const std::string& lister,
                    const std::vector<std::string>& unmatched) {
    for (const auto& o : unmatched) {
        // `apply S -- f.c --yes`: after `--` every word is a path, and an
        // option typed there is one that matches nothing; say so, or the next
        // line (`pass --yes`) contradicts what the user typed.
        if (o.size() > 1 && o[0] == '-') {
            std::fprintf(stderr,
                         "layover: %s: '%s' matches no change: a word after '--' is a path, not an option; put "
                         "options before '--'\n",
                         verb, base::display_path(o).c_str());
            continue;
        }
        std::fprintf(stderr,
                     "layover: %s: '%s' matches no change (paths are relative to the target %s; '%s' lists the "
                     "changes)\n",
                     verb, base::display_path(o).c_str(), base::display_path(target).c_str(), lister.c_str());
    }
}

std::string lister_of(const std::string& source, bool session) {
    return (session ? "layover status " : "layover show ") + base::display_path(source);
}

namespace {

// The current dir relative to the target, when it lies strictly inside it.
std::string cwd_in_target(const std::string& target) {
    char buf[PATH_MAX];
    if (!::getcwd(buf, sizeof buf)) return "";
    std::string cwd = buf;
    if (::realpath(cwd.c_str(), buf)) cwd = buf;
    std::string t = target;
    if (::realpath(target.c_str(), buf)) t = buf;
    if (cwd.size() <= t.size() + 1 || cwd.compare(0, t.size() + 1, t + "/") != 0) return "";
    return cwd.substr(t.size() + 1);
}

bool selects_any(const std::string& o, const std::vector<capture::Change>& changes) {
    base::PathFilter one({o}, {});
    auto covers = [&](const capture::Change& c) { return base::arg_covers(one, o, c.path); };
    return std::any_of(changes.begin(), changes.end(), covers);
}

}  // namespace

void warn_unmatched_paths(const char* verb, const std::string& target, const std::string& lister,
                          const std::vector<std::string>& rel, const std::vector<capture::Change>& changes) {
    std::vector<std::string> unmatched;
    std::string here;  // from a subdir, as git takes paths: say which path would match
    bool here_known = false;
    for (const auto& o : rel) {
        if (selects_any(o, changes)) continue;
        if (!o.empty() && o[0] != '-') {
            if (!here_known) here = cwd_in_target(target), here_known = true;
            std::string from_here = here.empty() ? "" : base::normalize_rel(here + "/" + o);
            if (!from_here.empty() && selects_any(from_here, changes)) {
                std::fprintf(stderr,
                             "layover: %s: '%s' matches no change (paths are relative to the target %s, not the "
                             "current directory): '%s' would match\n",
                             verb, base::display_path(o).c_str(), base::display_path(target).c_str(),
                             base::display_path(from_here).c_str());
                continue;
            }
        }
        unmatched.push_back(o);
    }
    warn_unmatched(verb, target, lister, unmatched);
}

bool normalize_path_args(const std::string& target, const std::vector<std::string>& raw, std::vector<std::string>* out,
                         std::string* error) {
    for (std::string p : raw) {
        // '' would normalize to the root and select every change: most often
        // an unset variable (`-- "$F"`), so a usage error, as Python and MCP
        // refuse paths=[""]. '.' still means the whole tree.
        if (p.empty()) {
            *error =
                "an empty path (''), which would select every change; name paths relative to the target, or "
                "give none for all of them (an unset variable, as in -- \"$F\", gives '')";
            return false;
        }
        if (p[0] == '/') {
            if (p == target) p.clear();
            else if (p.compare(0, target.size() + 1, target + "/") == 0) p = p.substr(target.size() + 1);
            else {
                *error = base::display_path(p) + " is not beneath the target " + base::display_path(target) +
                         "; give paths relative to it";
                return false;
            }
        }
        out->push_back(base::normalize_rel(p));
    }
    return true;
}

bool select_paths(const std::string& target, const std::string& lister, const std::vector<std::string>& raw,
                  std::vector<capture::Change>* changes, std::string* error) {
    std::vector<std::string> rel;
    if (!normalize_path_args(target, raw, &rel, error)) return false;
    warn_unmatched_paths("status", target, lister, rel, *changes);
    base::PathFilter filter(rel, {});
    std::vector<capture::Change> kept;
    for (auto& c : *changes)
        if (filter.selects(c.path)) kept.push_back(std::move(c));
    *changes = std::move(kept);
    return true;
}
