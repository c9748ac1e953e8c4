#include "review/prompt/risk_links.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdlib>
#include <set>

namespace review {

namespace {

std::string resolved(const std::string& path) {
    char buf[PATH_MAX];
    return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

void links_of(RiskContext* ctx, const std::string& root, const std::string& home) {
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

}  // namespace

void add_home_links(RiskContext* ctx, const std::string& target) {
    ctx->home_links.clear();
    std::string root = resolved(target);
    if (root.empty()) return;
    // The home the rules take inside the target, and the caller's own home
    // wherever it is: its ~/.bashrc may lead into the target (an agent at
    // work in ~/dotfiles edits the real start-up files there).
    std::string inside;
    if (ctx->home_rel) inside = ctx->home_rel->empty() ? root : root + "/" + *ctx->home_rel;
    if (!inside.empty()) links_of(ctx, root, inside);
    const char* env = std::getenv("HOME");
    std::string own = env && env[0] == '/' ? resolved(env) : std::string();
    if (!own.empty() && own != inside) links_of(ctx, root, own);
}

}  // namespace review
