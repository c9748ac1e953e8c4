#include "review/diff/show.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "review/diff/pager.h"
#include "review/diff/source.h"
#include "review/diff/stat.h"
#include "review/diff/step_groups.h"

namespace review {

bool stdout_is_tty() { return ::isatty(1) == 1; }

int terminal_width() {
    if (const char* c = std::getenv("COLUMNS")) {
        int n = std::atoi(c);
        if (n > 0) return n;
    }
    struct winsize ws {};
    if (stdout_is_tty() && ::ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

base::Result<bool> show_diff(const capture::Patch& patch, const ShowOptions& opts) {
    DiffScope scope;
    scope.paths = opts.paths;
    scope.exclude = opts.exclude;
    scope.old_root = opts.old_root;
    TRY(DiffSet set, collect_diffs(patch, scope));
    for (const auto& n : set.notes) std::fprintf(stderr, "layover: note: %s\n", n.c_str());
    bool any = set.changes > 0 || !set.files.empty();

    Style style;
    style.color = opts.color;
    style.escape = opts.escape;
    style.hunk_numbers = opts.hunk_numbers;
    Output out(opts.page && any, opts.color);
    std::vector<FileStat> stats;
    bool wrote_header = false;
    // Per step (review/diff/step_groups.h): the file order and, before each
    // group's first file, its header line.
    std::vector<size_t> order;
    std::vector<std::string> before(set.files.size());
    if (opts.format == ShowOptions::Format::Patch && !opts.flat) {
        std::vector<std::string> paths;
        for (const auto& f : set.files) paths.push_back(f.path);
        for (auto& g : group_by_step(patch.manifest().steps, paths)) {
            before[g.files.front()] = g.header;
            order.insert(order.end(), g.files.begin(), g.files.end());
        }
        // Files no record names (none should be) still show, last.
        std::vector<bool> placed(set.files.size(), false);
        for (size_t i : order) placed[i] = true;
        for (size_t i = 0; i < set.files.size(); i++)
            if (!placed[i] && !order.empty()) order.push_back(i);
    }
    if (order.empty())
        for (size_t i = 0; i < set.files.size(); i++) order.push_back(i);
    std::string pending;  // a group's header, written with its first file that renders
    for (size_t i : order) {
        const auto& f = set.files[i];
        if (!before[i].empty()) pending = before[i];
        FileStat st;
        std::string text = render_file(f, style, &st);
        if (text.empty()) continue;
        if (!pending.empty()) {
            text = (opts.color ? "\033[1m" + pending.substr(0, pending.size() - 1) + "\033[m\n" : pending) + text;
            pending.clear();
        }
        if (opts.filter) text = opts.filter(text);
        if (!opts.header.empty() && stats.empty() && !wrote_header) {
            TRY_VOID(out.write(opts.header));
            wrote_header = true;
        }
        if (opts.format == ShowOptions::Format::Patch) TRY_VOID(out.write(text));
        else stats.push_back(std::move(st));
    }
    if (opts.format == ShowOptions::Format::Stat && !stats.empty())
        TRY_VOID(out.write(render_stat(stats, opts.width, opts.color)));
    if (opts.format == ShowOptions::Format::NameStatus) TRY_VOID(out.write(render_name_status(stats)));
    out.finish();
    return any;
}

}  // namespace review
