#include "helper/cli/path_args.h"

#include "helper/base/glob.h"
#include "helper/base/text.h"

bool normalize_path_args(const std::string& target, const std::vector<std::string>& raw, std::vector<std::string>* out,
                         std::string* error) {
    for (std::string p : raw) {
        if (!p.empty() && p[0] == '/') {
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

bool select_paths(const std::string& target, const std::vector<std::string>& raw, std::vector<capture::Change>* changes,
                  std::string* error) {
    std::vector<std::string> rel;
    if (!normalize_path_args(target, raw, &rel, error)) return false;
    base::PathFilter filter(rel, {});
    std::vector<capture::Change> kept;
    for (auto& c : *changes)
        if (filter.selects(c.path)) kept.push_back(std::move(c));
    *changes = std::move(kept);
    return true;
}
