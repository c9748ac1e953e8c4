// `layover discard SESSION --rejected`: drop the rejected changes (and
// hunks) in force from the session. Frozen steps never change
// (docs/history.md): a change is dropped by writing into the live upper what
// brings the path back to the real tree's state (nothing: a whiteout; a
// file or symlink: its real content), or by removing it from the live upper
// when no step holds it; a rejected hunk by writing the session's file
// without that hunk.
#include "helper/cli/session/discard_rejected.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "capture/scan/walk/session_scan.h"
#include "helper/base/fd.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "helper/cli/session/session_rejections.h"
#include "helper/store/layers/layer_build.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/layers.h"
#include "helper/store/layers/steps.h"
#include "review/diff/hunks.h"

namespace {

constexpr size_t kMaxCopy = 1ull << 30;

// The live upper's dir for `rel` ("" = the upper itself), made where missing
// like the dir the session's layers (`view`, read in place) or else the
// real tree show there: its mode, user xattrs and times (without them it
// would be a change of its own; a plain dir merges with the layers below).
base::Result<base::Fd> upper_dir(int upper, const layers::Chain& view, int real, const std::string& rel) {
    TRY(base::Fd cur, base::open_at(upper, ".", O_RDONLY | O_DIRECTORY));
    std::string done;
    for (size_t a = 0; a < rel.size();) {
        size_t b = rel.find('/', a);
        if (b == std::string::npos) b = rel.size();
        std::string comp = rel.substr(a, b - a);
        done += (done.empty() ? "" : "/") + comp;
        a = b + 1;
        auto next = base::open_at(cur.get(), comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (!next && next.error().code == ENOENT) {
            TRY(std::optional<struct stat> in_view, steps::stat_in(view, done));
            struct stat st {};
            base::Result<base::Fd> like = base::error("");
            if (in_view && S_ISDIR(in_view->st_mode)) like = steps::open_in(view, done, &st);
            else if (!in_view) like = review::open_beneath(real, done, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            if (like && !in_view && ::fstat(like->get(), &st) != 0) like = base::sys_error("stat");
            if (!like || !S_ISDIR(st.st_mode))
                return base::error(base::display_path(done) + " is not a directory in the session");
            if (::mkdirat(cur.get(), comp.c_str(), st.st_mode & 07777) != 0)
                return base::sys_error("creating " + base::display_path(done) + " in the live upper");
            next = base::open_at(cur.get(), comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            if (next) {
                if (auto r = steps::copy_attrs(like->get(), next->get(), st, in_view.has_value()); !r)
                    return r.error().context("copying the xattrs of " + base::display_path(done));
            }
        }
        if (!next) return next.error().context("opening " + base::display_path(done) + " in the live upper");
        cur = std::move(next.value());
    }
    return cur;
}

base::Result<void> remove_entry(int dir, const std::string& name) {
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return base::Ok();
    return review::remove_tree_at(dir, name);
}

// `data` as a new file `name` in `dir` (temp + rename: never written through
// an inode a step layer may share), with the user xattrs, mode and times of
// `like` (stat'ed as st; in a layer when from_layer, else on the real tree):
// a file without them would be a change of its own, and apply would take
// the real file's xattrs away.
base::Result<void> put_file(int dir, const std::string& name, const std::string& data, int like, const struct stat& st,
                            bool from_layer) {
    std::string tmp = ".layover-discard." + std::to_string(::getpid());
    ::unlinkat(dir, tmp.c_str(), 0);
    TRY(base::Fd fd, base::open_at(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600));
    TRY_VOID(base::write_all(fd.get(), data.data(), data.size()));
    if (auto r = steps::copy_attrs(like, fd.get(), st, from_layer); !r)
        return r.error().context("copying the xattrs of " + base::display_path(name));
    TRY_VOID(fd.close());
    struct stat old {};
    if (::fstatat(dir, name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(old.st_mode))
        TRY_VOID(review::remove_tree_at(dir, name));
    if (::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) return base::sys_error("writing " + name);
    return base::Ok();
}

// A step layer holds `rel` (or cuts the way to it): conservative on doubt.
bool held_by_steps(const std::string& session_dir, int steps_count, const std::string& rel) {
    auto first = steps::first_layer(session_dir);  // below it: squashed steps, no layers
    for (int n = first ? first.value() : 1; n <= steps_count; n++) {
        auto layer = steps::open_layer(session_dir, n);
        if (!layer) return true;
        auto e = review::open_beneath(layer->get(), rel, O_PATH | O_NOFOLLOW);
        if (e || e.error().code != ENOENT) return true;
    }
    return false;
}

base::Result<void> drop_whole(const session::Info& info, int upper, const layers::Chain& view, int real,
                              int steps_count, const std::string& rel) {
    auto [parent, name] = review::split_parent(rel);
    if (!held_by_steps(info.dir, steps_count, rel)) {
        // Only the live upper has it: removing it shows the real tree again.
        // Beneath the upper, no symlink on the way (a parent's middle
        // component could be one the program made after the rejection).
        auto dir = review::open_beneath(upper, parent, O_RDONLY | O_DIRECTORY);
        if (dir) return remove_entry(dir->get(), name);
        int e = dir.error().code;
        if (e != ENOENT && e != ENOTDIR && e != ELOOP) return dir.error();
    }
    TRY(base::Fd dir, upper_dir(upper, view, real, parent));
    auto r = review::open_beneath(real, rel, O_PATH | O_NOFOLLOW);
    if (!r) {
        if (r.error().code != ENOENT) return r.error();
        TRY_VOID(remove_entry(dir.get(), name));
        if (::mknodat(dir.get(), name.c_str(), S_IFCHR | 0, makedev(0, 0)) != 0)
            return base::sys_error("writing a whiteout for " + base::display_path(rel));
        return base::Ok();
    }
    struct stat st {};
    if (::fstat(r->get(), &st) != 0) return base::sys_error("stat " + base::display_path(rel));
    if (S_ISLNK(st.st_mode)) {
        std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
        ssize_t n = ::readlinkat(r->get(), "", target.data(), target.size());
        if (n < 0) return base::sys_error("reading link " + base::display_path(rel));
        target.resize(static_cast<size_t>(n));
        TRY_VOID(remove_entry(dir.get(), name));
        if (::symlinkat(target.c_str(), dir.get(), name.c_str()) != 0)
            return base::sys_error("writing " + base::display_path(rel));
        return base::Ok();
    }
    if (!S_ISREG(st.st_mode))
        return base::error(base::display_path(rel) +
                           " is a directory or special file on the real tree, and an earlier step holds its "
                           "change: it cannot be put back from here; leave it to 'apply' (which skips it) or "
                           "'layover rollback'");
    TRY(base::Fd rd, review::open_beneath(real, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
    TRY(std::string data, base::read_all(rd.get(), kMaxCopy));
    return put_file(dir.get(), name, data, rd.get(), st, false);
}

base::Result<void> drop_hunk(int upper, const layers::Chain& view, int real_root, const review::RejectionState& s,
                             const SessionSides& sides) {
    TRY(review::Side now, sides.session_side(s.rec.path));
    TRY(review::Side real, sides.real_side(s.rec.path));
    size_t count = review::count_hunks(real.data, now.data);
    std::vector<bool> take(count, true);
    if (s.hunk_now < 1 || s.hunk_now > count) return base::error("the hunk moved; run 'layover status' again");
    take[s.hunk_now - 1] = false;
    std::string content = review::apply_hunks(real.data, now.data, take);
    auto [parent, name] = review::split_parent(s.rec.path);
    struct stat st {};
    auto now_fd = steps::open_in(view, s.rec.path, &st);
    if (!now_fd) return base::error(base::display_path(s.rec.path) + " is not in the session any more");
    TRY(base::Fd dir, upper_dir(upper, view, real_root, parent));
    return put_file(dir.get(), name, content, now_fd->get(), st, true);
}

}  // namespace

int discard_rejected(const session::Info& info) {
    auto fail = [&](const std::string& msg) {
        std::fprintf(stderr, "layover: discard --rejected: %s\n", msg.c_str());
        return 1;
    };
    if (info.state == "running")
        return fail("session '" + info.meta.name + "' is running (supervisor pid " + std::to_string(info.meta.pid) +
                    "); stop it first, then re-run");
    auto lk = session::lock(info.dir, info.meta.name);
    if (!lk) return fail(lk.error().message);
    auto changes = capture::session_changes_as_owner(info, false);
    if (!changes) return fail(changes.error().message);
    auto recs = session::read_rejections(info.dir);
    if (!recs) return fail(recs.error().message);
    auto opened = capture::open_session_trees(info);
    if (!opened) return fail(opened.error().message);
    auto upper = base::open_at(AT_FDCWD, info.dir + "/upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (!upper) return fail(upper.error().message);
    auto steps_count = steps::count(info.dir);
    if (!steps_count) return fail(steps_count.error().message);
    auto trees = std::make_shared<capture::SessionTrees>(std::move(opened.value()));
    SessionSides sides = sides_of(trees);
    // The live upper over every step, read in place: where the drops below
    // read modes and parent dirs from.
    auto view = steps::stack_chain(info.dir);
    if (!view) return fail(view.error().message);
    auto states = review::judge_rejections(recs->list, changes.value(), sides.session_side, sides.real_side);
    if (!states) return fail(states.error().message);
    std::vector<uint64_t> dropped;
    std::vector<std::string> lines;
    // Hunks first, each against the file as it is: dropping one renumbers the rest.
    for (int pass = 0; pass < 2; pass++) {
        for (const auto& s : states.value()) {
            if (!s.in_force || (pass == 0) != (s.rec.hunk != 0)) continue;
            review::RejectionState now = s;
            if (pass == 0) {
                // Judged again: an earlier hunk of the same file changed the numbering.
                auto again = review::judge_rejections({s.rec}, changes.value(), sides.session_side, sides.real_side);
                if (!again || !again->at(0).in_force) continue;
                now = again->at(0);
            }
            auto r = pass == 0 ? drop_hunk(upper->get(), view.value(), trees->lower.get(), now, sides)
                               : drop_whole(info, upper->get(), view.value(), trees->lower.get(), steps_count.value(),
                                            s.rec.path);
            if (!r) return fail(base::display_path(s.rec.path) + ": " + r.error().message);
            dropped.push_back(s.rec.seq);
            lines.push_back(review::rejection_line(now));
        }
    }
    if (auto r = session::remove_rejections(info.dir, dropped); !r) return fail(r.error().message);
    if (lines.empty()) {
        std::printf("no rejected changes in force in session %s\n", info.meta.name.c_str());
        return 0;
    }
    std::printf("dropped %zu rejected change(s) from session %s:\n", lines.size(), info.meta.name.c_str());
    for (const auto& l : lines) std::printf("  %s\n", l.c_str());
    return 0;
}
