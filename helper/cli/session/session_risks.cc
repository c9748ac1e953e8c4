#include "helper/cli/session/session_risks.h"

#include <cstdlib>
#include <memory>
#include <unordered_map>

#include "capture/scan/walk/session_scan.h"
#include "review/prompt/risk_links.h"
#include "review/prompt/risk_scan.h"

review::RiskContext session_risks(const session::Info& info, const std::vector<capture::Change>& changes,
                                  const capture::StepRange& range, capture::VerdictCache* verdicts,
                                  review::WalkRiskReader* walk, std::shared_ptr<capture::SessionTrees> opened) {
    review::RiskContext ctx;
    // The session's own target: home rules only where $HOME really is.
    if (const char* home = std::getenv("HOME")) ctx.home_rel = review::home_relative(info.meta.target, home);
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && xdg[0] == '/')
        ctx.config_rel = review::home_relative(info.meta.target, std::string(xdg) + "/layover");
    review::add_home_links(&ctx, info.meta.target);
    if (!opened) {
        auto fresh = capture::open_session_trees(info, range);
        if (!fresh) return ctx;
        opened = std::make_shared<capture::SessionTrees>(std::move(fresh.value()));
    }
    const capture::SessionTrees* trees = opened.get();
    // The lower, shared with the trees (no dup: the probes only openat beneath it).
    std::shared_ptr<base::Fd> lower(opened, &opened->lower);
    // Each changed file is read from the layer the scan found it in.
    std::unordered_map<std::string, uint32_t> layer_of;
    if (!trees->steps.empty())
        for (const auto& c : changes) layer_of.emplace(c.path, c.layer);
    ctx.dir_has_makefile = review::makefile_probe(lower);
    ctx.dir_is_git_repo = review::git_repo_probe(lower);
    review::add_content_risks(
        &ctx, changes,
        [&](const std::string& p) {
            capture::Change at;
            if (auto l = layer_of.find(p); l != layer_of.end()) at.layer = l->second;
            int holder = trees->holder_of(at);
            return holder < 0 ? std::nullopt : review::read_text_beneath(holder, p);
        },
        [&](const std::string& p) { return review::read_text_beneath(lower->get(), p); }, verdicts, walk);
    return ctx;
}
