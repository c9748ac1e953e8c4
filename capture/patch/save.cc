#include "capture/patch/save.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "capture/patch/manifest_steps.h"
#include "capture/patch/writer.h"
#include "capture/scan/entry/fingerprint.h"
#include "capture/scan/walk/session_scan.h"
#include "helper/base/clock.h"
#include "helper/base/defer.h"
#include "helper/base/fault.h"
#include "helper/base/fd.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/glob.h"
#include "helper/base/text.h"
#include "helper/base/unlink_on_signal.h"
#include "helper/base/version.h"
#include "helper/store/records/owner_ns.h"

namespace capture {

namespace {

// --only / PATH...: the selected paths, their subtrees, and the changed dirs
// above them (an added or replaced parent must come along for the child to apply).
void select_only(ScanResult* r, const std::vector<std::string>& only, const std::vector<std::string>& exclude) {
    if (only.empty() && exclude.empty()) return;
    base::PathFilter filter(only, exclude);
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

// SaveOptions::contents: each such file's data from a sealed memfd with the
// upper file's size and mtime (the writer checks both), linked to no other.
base::Result<void> replace_contents(ScanResult* r, const std::map<std::string, std::string>& contents) {
    if (contents.empty()) return base::Ok();
    for (auto& it : r->items) {
        auto c = contents.find(it.change.path);
        if (c == contents.end() || it.change.type != Type::File || it.whiteout) continue;
        base::Fd fd(::memfd_create("layover-save", MFD_CLOEXEC));
        if (fd.get() < 0) return base::sys_error("memfd_create");
        TRY_VOID(base::write_all(fd.get(), c->second.data(), c->second.size()));
        struct timespec ts[2];
        ts[0].tv_sec = ts[1].tv_sec = it.change.mtime_ns / 1000000000;
        ts[0].tv_nsec = ts[1].tv_nsec = it.change.mtime_ns % 1000000000;
        if (::futimens(fd.get(), ts) != 0) return base::sys_error("futimens");
        it.change.size = c->second.size();
        it.nlink = 1;
        it.fd = std::move(fd);
    }
    return base::Ok();
}

// The base contents of modified text files (at most max bytes each), as the
// scan found them while it fingerprinted their base records (a changed or
// sparse real file has none, and a stale one, whose real content is no
// longer the agent's base, none): stored once per fingerprint, before the
// first file that has it (layover-patch/3), listed in the manifest in that
// order. By item (of the scan's, which the writer is given): the original's
// index in the manifest's list. On one thread between the walk and the
// member makers, with the other CPU idle: sized up front, no copies.
using Originals = std::unordered_map<const Item*, size_t>;
void collect_originals(const ScanResult& scan, Manifest* m, Originals* before) {
    // A file's base record, found where the walk put it: the base records
    // are in walk order as the items are (a file's right after its dir's
    // and its earlier siblings'), so each is a few records past the last
    // one found. Only one that is not (a record the walk made earlier, the
    // subtree of a deleted dir in between) is looked up by path, in a map
    // made the first time: hashing 10,000 paths into it was ~1/4 of this
    // serial step (docs/performance.md, "Save, round 11").
    constexpr size_t kAhead = 64;
    std::unordered_map<std::string_view, const BaseEntry*> bases;
    size_t next = 0;
    auto base_of = [&](const std::string& path) -> const BaseEntry* {
        for (size_t i = next; i < scan.base.size() && i < next + kAhead; i++)
            if (scan.base[i].path == path) {
                next = i + 1;
                return &scan.base[i];
            }
        if (bases.empty()) {
            bases.reserve(scan.base.size());
            for (const auto& b : scan.base) bases.emplace(b.path, &b);
        }
        auto b = bases.find(path);
        return b == bases.end() ? nullptr : b->second;
    };
    std::unordered_set<std::string_view> have;
    have.reserve(scan.items.size());
    before->reserve(scan.items.size());
    for (const auto& it : scan.items) {
        const Change& c = it.change;
        if (!it.base_text || c.kind != Kind::Modified || c.type != Type::File || c.old_type != Type::File) continue;
        const BaseEntry* b = base_of(c.path);
        if (!b || b->stale || b->fingerprint.empty() || !have.insert(b->fingerprint).second) continue;
        before->emplace(&it, m->originals.size());
        m->originals.push_back({b->fingerprint, b->size});
    }
}

// Each original is read again from the real tree as the writer stores it,
// into one buffer: the scan keeping 1,000 of 40 KiB until then cost more
// CPU (page faults of fresh memory, malloc) than a second read from the
// page cache. It is read through the fd the scan fingerprinted it from
// (Item::base_file) when the scan kept it, and closed here: opening it again by path beneath
// the real root was ~6% of a 10,000-modified save's CPU. It must still be
// the content the scan fingerprinted.
class OriginalReader {
public:
    OriginalReader(int lower, const Originals& list, const std::vector<Manifest::Original>& listed)
        : lower_(lower), list_(list), listed_(listed) {}
    // From the writer's threads: one buffer each.
    base::Result<std::optional<OriginalContent>> operator()(const Item& it) {
        thread_local std::string buf;
        auto at = list_.find(&it);
        if (at == list_.end()) return std::optional<OriginalContent>();
        const Manifest::Original& o = listed_[at->second];
        const std::string& path = it.change.path;
        auto changed = [&] {
            return base::error("the real file " + base::display_path(path) +
                               " changed while the patch was being written; save again");
        };
        // Closed when done, whichever it is: the kept one here, on this
        // thread, rather than all of them in the process's exit.
        base::Fd opened = std::move(it.base_file);
        int fd = opened.get();
        if (fd < 0) {
            auto r = review::open_beneath(lower_, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
            if (!r)
                return base::error("cannot read the real file " + base::display_path(path) + ": " + r.error().message);
            opened = std::move(r.value());
            fd = opened.get();
            struct stat st {};
            if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return changed();
        }
        // One byte more than the size: a file that grew reads past it, and
        // a read that stops at the size is the file's end (no second read).
        size_t size = static_cast<size_t>(o.size);
        buf.resize(size + 1);
        size_t got = 0;
        while (got < buf.size()) {
            ssize_t n = ::pread(fd, buf.data() + got, buf.size() - got, static_cast<off_t>(got));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return base::sys_error("reading the real file " + base::display_path(path));
            if (n == 0) break;
            got += static_cast<size_t>(n);
            if (got == size) break;
        }
        if (got != size) return changed();
        std::string_view data(buf.data(), got);
        OriginalContent out{data, fingerprint_bytes(data)};
        if (out.fingerprint != o.fingerprint) return changed();
        return std::optional<OriginalContent>(std::move(out));
    }

private:
    int lower_;
    const Originals& list_;
    const std::vector<Manifest::Original>& listed_;
};

// What save's child builds, left for its exit to free (save_session):
// nothing in it may need its destructor to run, except `trees` (reset first).
struct Held {
    SessionTrees trees;
    base::IgnoreRules rules;
    ScanResult scan;
    Manifest manifest;
    Originals originals;
};

std::string temp_name_for(const std::string& out) {
    auto slash = out.rfind('/');
    std::string dir = slash == std::string::npos ? "" : out.substr(0, slash + 1);
    std::string base = slash == std::string::npos ? out : out.substr(slash + 1);
    std::random_device rd;
    return dir + "." + base + ".tmp-" + std::to_string(rd() % 1000000000u);
}

// Why FILE cannot be created, with the fix: the directory it names, not the
// temporary file beside it.
base::Error create_error(const std::string& out_file, const base::Error& e) {
    auto slash = out_file.rfind('/');
    std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : out_file.substr(0, slash);
    std::string head = "cannot create " + base::display_path(out_file) + ": ";
    if (e.code == ENOENT || e.code == ENOTDIR)
        return base::Error{
            head + "directory " + base::display_path(dir) + " does not exist; create it or pick another path", e.code};
    if (e.code == EACCES || e.code == EPERM || e.code == EROFS)
        return base::Error{head + "directory " + base::display_path(dir) + " is not writable (" +
                               std::strerror(e.code) + "); pick a path in a directory you can write",
                           e.code};
    return base::Error{head + e.message, e.code};
}

}  // namespace

base::Result<void> save_session(const session::Info& s, const std::string& out_file, const SaveOptions& opts,
                                std::string* notes, std::vector<std::string>* unmatched) {
    if (out_file.empty()) return base::error("no output file given; use -o FILE");
    struct stat ost;
    if (::stat(out_file.c_str(), &ost) == 0 && S_ISDIR(ost.st_mode))
        return base::error(base::display_path(out_file) + " is a directory; name a file, e.g. -o " +
                           base::display_path(out_file + (out_file.back() == '/' ? "" : "/") + "patch.tar.zst"));
    std::string tmp = temp_name_for(out_file);
    auto fdr = base::open_at(AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (!fdr) return create_error(out_file, fdr.error());
    base::Fd fd = std::move(fdr.value());
    base::Defer cleanup([&] { ::unlink(tmp.c_str()); });
    base::UnlinkOnSignal on_signal(tmp);  // a Ctrl+C leaves no hidden partial patch beside FILE
    ::fchmod(fd.get(), 0600);
    int out = fd.get();
    // Real contents an apply of this session left or found (helper/store/records/known_bases.h).
    session::KnownBasesOnce known(s.dir);
    // Copies renamed over (helper/store/session/first_copies.h).
    session::FirstCopiesOnce first_copies(s.dir, session::unnoted_since(s.meta));
    const std::string what = std::string(opts.doing) + " session '" + s.meta.name + "'";
    auto r = in_owner_ns(
        [&]() -> base::Result<std::string> {
            // What the walk and the writer hold (10,000 items, their strings, the
            // kept files): left to the child's exit, which frees it all at once,
            // after the parent has the result. Freeing it piece by piece took
            // ~10% of a 10,000-file save's CPU time, all of it before the fsync.
            auto held = std::make_unique<Held>();
            SessionTrees& t = held->trees;
            TRY(t, open_session_trees(s, opts.steps));
            ScanOptions so;
            so.with_base = true;
            so.keep_files = true;
            so.session_start_ns = session::began_ns(s.meta);
            so.layer_start = t.layer_starts(s);
            so.first_copies = &first_copies;
            so.excluded = s.meta.hidden;
            so.known_bases = &known;
            so.base_stale = opts.steps.against.empty();  // diff A B: A's view is no copy-up's source
            so.keep_base_max = opts.max_original;
            base::IgnoreRules& rules = held->rules;
            TRY(rules, load_ignore_rules(t.lower.get(), s.meta.target, opts.ignore));
            so.ignore = &rules;
            so.include_ignored = opts.ignore.include_ignored;
            auto indexes = index_session_layers(s, t);
            for (const auto& x : indexes) so.indexes.push_back(x.get());
            ScanResult& scan = held->scan;
            TRY(scan, scan_layers(t.layers(), t.lower.get(), so));
            // Which PATH arguments select nothing, from this walk (no second
            // one): their indices lead the result, "1,3\n".
            std::string result;
            for (size_t i = 0; i < opts.only.size(); i++) {
                base::PathFilter one({opts.only[i]}, {});
                auto covers = [&](const Item& it) { return base::arg_covers(one, opts.only[i], it.change.path); };
                if (std::none_of(scan.items.begin(), scan.items.end(), covers))
                    result += (result.empty() ? "" : ",") + std::to_string(i);
            }
            result += '\n';
            select_only(&scan, opts.only, opts.exclude);
            TRY_VOID(replace_contents(&scan, opts.contents));
            Manifest& m = held->manifest;
            m.format = "layover-patch/1";
            m.target = s.meta.target;
            m.session = s.meta.name;
            m.command = s.meta.command;
            m.created = base::utc_now_rfc3339();
            m.version = LAYOVER_VERSION;
            m.ignored = scan.ignored;
            m.changes.reserve(scan.items.size());
            for (const auto& it : scan.items) m.changes.push_back(it.change);
            Originals& originals = held->originals;
            collect_originals(scan, &m, &originals);
            if (!m.originals.empty()) m.format = "layover-patch/3";
            m.base = std::move(scan.base);
            base::PathFilter only(opts.only, opts.exclude);
            TRY(m.steps, session_records(s.dir, s.meta.target, [&](const std::string& p) {
                    return only.selects(p) &&
                           (so.include_ignored || (!rules.ignored(p, false) && !rules.ignored(p, true)));
                }));
            WriteOptions wo;
            wo.original = OriginalReader(t.lower.get(), originals, m.originals);
            std::string said;
            if (opts.on_content)
                wo.on_content = [&](const Item& it, std::string_view now) -> std::string {
                    const Change& c = it.change;
                    auto base = [&]() -> std::optional<std::string> {
                        if (c.kind == Kind::Added || c.old_type != Type::File) return std::nullopt;
                        auto b = review::open_beneath(t.lower.get(), c.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
                        struct stat st {};
                        if (!b || ::fstat(b->get(), &st) != 0 || !S_ISREG(st.st_mode) ||
                            static_cast<uint64_t>(st.st_size) > kContentHookMax)
                            return std::nullopt;
                        return base::read_upto(b->get(), static_cast<size_t>(st.st_size));
                    };
                    return opts.on_content(c, now, base);
                };
            wo.notes = &said;
            wo.durable = opts.durable;
            TRY_VOID(write_patch(out, m, scan.items, t.layers(), wo));
            // The trees have work to do when closed (a compare's temporary
            // layer is removed): closed here; only plain memory and fds are left.
            held->trees = SessionTrees{};
            (void)held.release();
            return result + said;
        },
        [&]() -> base::Result<void> {
            // While the child exits.
            if (opts.durable && ::fsync(fd.get()) != 0) return base::sys_error("writing " + out_file);
            return base::fault_point("save", "written");  // the patch whole in its temporary file, not yet renamed
        });
    if (!r) return r.error().context(what);
    size_t eol = r->find('\n');
    if (eol == std::string::npos) return base::error(what + ": a bad reply from its writer");
    if (unmatched)
        for (size_t i = 0; i < eol;) {
            size_t end = std::min(r->find(',', i), eol);
            size_t n = std::strtoul(r->c_str() + i, nullptr, 10);
            if (n < opts.only.size()) unmatched->push_back(opts.only[n]);
            i = end + 1;
        }
    if (notes) *notes = r->substr(eol + 1);
    TRY_VOID(fd.close());
    if (::rename(tmp.c_str(), out_file.c_str()) != 0) return base::sys_error("creating " + out_file);
    cleanup.dismiss();
    return base::Ok();
}

}  // namespace capture
