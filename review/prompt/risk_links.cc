#include "review/prompt/risk_links.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <set>

namespace review {

namespace {

std::string resolved(const std::string& path) {
    char buf[PATH_MAX];
    return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

}  // namespace

void add_home_links(RiskContext* ctx, const std::string& target) {
    ctx->home_links.clear();
    if (!ctx->home_rel) return;
    std::string root = resolved(target);
    if (root.empty()) return;
    const std::string& h = *ctx->home_rel;
    std::string home = h.empty() ? root : root + "/" + h;
    std::set<std::string> seen;
    for (std::string rule : home_rule_paths()) {
        if (!rule.empty() && rule.back() == '/') rule.pop_back();
        // Each dir above the rule's path, then the path: the first missing one ends it.
        for (size_t at = 0;;) {
            size_t slash = rule.find('/', at);
            std::string prefix = rule.substr(0, slash);
            if (seen.insert(prefix).second) {
                struct stat st {};
                std::string abs = home + "/" + prefix;
                if (::lstat(abs.c_str(), &st) != 0) break;
                if (S_ISLNK(st.st_mode)) {
                    std::string real = resolved(abs);
                    if (real.size() > root.size() + 1 && real.compare(0, root.size() + 1, root + "/") == 0)
                        ctx->home_links.emplace_back(real.substr(root.size() + 1), prefix);
                }
            }
            if (slash == std::string::npos) break;
            at = slash + 1;
        }
    }
}

}  // namespace review
