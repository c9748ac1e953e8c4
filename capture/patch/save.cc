#include "capture/patch/save.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <random>
#include <set>

#include "capture/patch/writer.h"
#include "capture/scan/session_scan.h"
#include "helper/base/clock.h"
#include "helper/base/defer.h"
#include "helper/base/fd.h"
#include "helper/base/glob.h"
#include "helper/base/version.h"
#include "helper/store/owner_ns.h"

namespace capture {

namespace {

// --only / PATH...: the selected paths, their subtrees, and the changed dirs
// above them (an added or replaced parent must come along for the child to apply).
void select_only(ScanResult* r, const std::vector<std::string>& only) {
    if (only.empty()) return;
    base::PathFilter filter(only, {});
    for (const auto& it : r->items) filter.note(it.change.path);
    std::vector<Item> items;
    std::set<std::string> kept;
    for (auto& it : r->items) {
        if (!filter.needed(it.change.path)) continue;
        kept.insert(it.change.path);
        items.push_back(std::move(it));
    }
    r->items = std::move(items);
    std::vector<BaseEntry> base;
    for (auto& b : r->base) {
        bool keep = kept.count(b.path) > 0;
        for (size_t i = b.path.find('/'); !keep && i != std::string::npos; i = b.path.find('/', i + 1))
            keep = kept.count(b.path.substr(0, i)) > 0;
        if (keep) base.push_back(std::move(b));
    }
    r->base = std::move(base);
}

std::string temp_name_for(const std::string& out) {
    auto slash = out.rfind('/');
    std::string dir = slash == std::string::npos ? "" : out.substr(0, slash + 1);
    std::string base = slash == std::string::npos ? out : out.substr(slash + 1);
    std::random_device rd;
    return dir + "." + base + ".tmp-" + std::to_string(rd() % 1000000000u);
}

}  // namespace

base::Result<void> save_session(const session::Info& s, const std::string& out_file, const SaveOptions& opts) {
    if (out_file.empty()) return base::error("no output file given; use -o FILE");
    std::string tmp = temp_name_for(out_file);
    auto fdr = base::open_at(AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (!fdr) return base::error("cannot create " + out_file + ": " + fdr.error().message);
    base::Fd fd = std::move(fdr.value());
    base::Defer cleanup([&] { ::unlink(tmp.c_str()); });
    ::fchmod(fd.get(), 0600);
    int out = fd.get();
    auto known = session::read_known_bases(s.dir);
    if (!known) return known.error().context("saving session '" + s.meta.name + "'");
    auto r = in_owner_ns([&]() -> base::Result<std::string> {
        TRY(SessionTrees t, open_session_trees(s));
        ScanOptions so;
        so.with_base = true;
        so.keep_files = true;
        so.session_start_ns = s.meta.created_ns;
        so.excluded = s.meta.hidden;
        so.known_bases = &known.value();
        TRY(base::IgnoreRules rules, load_ignore_rules(t.lower.get(), s.meta.target, opts.ignore));
        so.ignore = &rules;
        so.include_ignored = opts.ignore.include_ignored;
        TRY(ScanResult scan, scan_upper(t.upper.get(), t.lower.get(), so));
        select_only(&scan, opts.only);
        Manifest m;
        m.format = "layover-patch/1";
        m.target = s.meta.target;
        m.session = s.meta.name;
        m.command = s.meta.command;
        m.created = base::utc_now_rfc3339();
        m.version = LAYOVER_VERSION;
        m.ignored = scan.ignored;
        for (const auto& it : scan.items) m.changes.push_back(it.change);
        m.base = std::move(scan.base);
        TRY_VOID(write_patch(out, m, scan.items, t.upper.get()));
        return std::string();
    });
    if (!r) return r.error().context("saving session '" + s.meta.name + "'");
    if (::fsync(fd.get()) != 0) return base::sys_error("writing " + out_file);
    TRY_VOID(fd.close());
    if (::rename(tmp.c_str(), out_file.c_str()) != 0) return base::sys_error("creating " + out_file);
    cleanup.dismiss();
    return base::Ok();
}

}  // namespace capture
