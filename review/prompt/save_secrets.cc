#include "review/prompt/save_secrets.h"

#include <algorithm>
#include <cstdio>

#include "review/prompt/content_risk.h"
#include "review/prompt/risk_scan.h"

namespace review {

void scan_saved_secrets(capture::SaveOptions* so) {
    so->on_content = [](const capture::Change& c, std::string_view now, const capture::SaveOptions::BaseText& base) {
        if (!content_scanned(c.path)) return std::string();
        RiskContext ctx;
        add_content_risk(&ctx, c, now, [&](const std::string&) { return base(); });
        std::string out;
        for (const auto& l : secret_lines(ctx)) out += l + "\n";
        return out;
    };
}

void warn_saved_secrets(const std::string& lines) {
    if (lines.empty()) return;
    size_t n = static_cast<size_t>(std::count(lines.begin(), lines.end(), '\n'));
    std::fprintf(stderr, "layover: save: warning: the patch holds %zu secret(s); look before sharing it:\n", n);
    for (size_t at = 0; at < lines.size();) {
        size_t nl = lines.find('\n', at);
        std::fprintf(stderr, "  %.*s\n", static_cast<int>(nl - at), lines.data() + at);
        at = nl + 1;
    }
}

}  // namespace review
