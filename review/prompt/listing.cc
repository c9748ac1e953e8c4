#include "review/prompt/listing.h"

#include <cstdio>
#include <cstdlib>

#include "helper/base/text.h"
#include "review/apply/conflict.h"
#include "review/prompt/risk_links.h"

namespace review {

std::string target_line(const capture::Manifest& m, const std::string& override_target) {
    std::string out = "target: ";
    if (!override_target.empty() && override_target != m.target)
        out +=
            base::display_path(override_target) + " (--target; the patch names " + base::display_path(m.target) + ")";
    else out += base::display_path(m.target);
    if (!m.session.empty())
        out += "  (session " + base::display_path(m.session) + ", created " + base::display_path(m.created) +
               ")";  // a patch's text: hostile
    return out;
}

std::string change_details(const capture::Change& c, const RiskContext& ctx) {
    using capture::Kind;
    using capture::Type;
    std::string d;
    if (c.kind != Kind::Deleted && c.type != Type::Symlink && c.type != Type::None) {
        bool had = c.old_type == c.type && c.old_type != Type::None;
        d = had && c.old_mode != c.mode ? mode_octal(c.old_mode) + " -> " + mode_octal(c.mode) : mode_octal(c.mode);
        if (c.type == Type::File) d += ", " + base::bytes_text(c.size);
    }
    std::string out = d.empty() ? "" : "  [" + d + "]";
    return out + risk_marks(c, ctx);
}

std::string risk_marks(const capture::Change& c, const RiskContext& ctx) {
    std::string reasons;
    for (const auto& w : risks_of(c, ctx)) reasons += (reasons.empty() ? "" : ", ") + w;
    return reasons.empty() ? "" : "  ! " + reasons;
}

std::vector<std::string> marked_changes(const std::vector<capture::Change>& changes, const RiskContext& ctx,
                                        const std::function<bool(std::string_view)>& selected) {
    std::vector<std::string> out;
    for (const auto& c : changes) {
        if (!selected(c.path)) continue;
        bool special = c.kind != capture::Kind::Deleted && c.type != capture::Type::Symlink && (c.mode & 07000) != 0;
        std::string details = change_details(c, ctx);
        if (!special && details.find("  ! ") == std::string::npos) continue;
        out.push_back(std::string(1, capture::kind_letter(c.kind)) + "  " + base::display_path(c.path) +
                      (c.type == capture::Type::Dir ? "/" : "") + details);
    }
    return out;
}

RiskContext risk_context_for(const std::string& target) {
    RiskContext ctx;
    if (const char* home = std::getenv("HOME")) ctx.home_rel = home_relative(target, home);
    // A target that is not (above) the caller's home is someone's home as
    // far as the marks go: a patch from elsewhere names its own.
    if (!ctx.home_rel) ctx.home_rel = std::string();
    add_home_links(&ctx, target);
    return ctx;
}

}  // namespace review
