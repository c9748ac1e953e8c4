#include "review/prompt/listing.h"

#include <cstdio>
#include <cstdlib>

#include "capture/scan/entry/summary.h"
#include "helper/base/text.h"
#include "review/apply/conflict.h"
#include "review/prompt/risk_links.h"

namespace review {

std::string shown_path(const capture::Change& c) {
    std::string p = base::display_path(c.path);
    bool dir = c.type == capture::Type::Dir || (c.type == capture::Type::None && c.old_type == capture::Type::Dir);
    return dir ? p + "/" : p;
}

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

std::string risk_marks(const capture::Change& c, const RiskContext& ctx) { return marks_text(risks_of(c, ctx)); }

std::string risk_lines(const std::vector<capture::Change>& changes, const RiskContext& ctx,
                       const std::function<bool(std::string_view)>& selected, bool details) {
    std::string marked, special;
    size_t n_marked = 0, n_special = 0;
    for (const auto& c : changes) {
        if (!selected(c.path)) continue;
        std::string marks = risk_marks(c, ctx);
        bool set_bits = c.kind != capture::Kind::Deleted && c.type != capture::Type::Symlink && (c.mode & 07000) != 0;
        if (marks.empty() && !(details && set_bits)) continue;
        std::string line = "  " + capture::summary_line(c, false) + (details ? change_details(c, ctx) : marks) + "\n";
        if (marks.empty()) special += line, n_special++;
        else marked += line, n_marked++;
    }
    auto head = [](size_t n, const char* what) {
        return "layover: " + base::thousands(n) + (n == 1 ? " change " : " changes ") + what + ":\n";
    };
    std::string out;
    if (n_marked) out = head(n_marked, "marked ! need a careful look") + marked;
    if (n_special) out += head(n_special, "with a set-id or sticky bit") + special;
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
