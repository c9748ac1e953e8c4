// `layover log [SESSION] [--json]`: a session's steps, newest first, with the
// live upper as (live) (docs/history.md).
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "helper/base/clock.h"
#include "helper/base/fault.h"
#include "helper/base/json/bytes.h"
#include "helper/base/text.h"
#include "helper/cli/common/patch_tool.h"
#include "helper/cli/common/step_args.h"
#include "helper/cli/common/usage.h"
#include "helper/sandbox/ipc/control.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/steps.h"
#include "helper/store/records/owner_ns.h"
#include "helper/store/records/usage.h"
#include "helper/store/session/session.h"

namespace {

constexpr const char* kUsage =
    "usage: layover log [SESSION|FILE.tar.zst] [--json]   the session's (or a saved patch's) steps, newest first";

int fail(const std::string& msg) {
    std::fprintf(stderr, "layover: %s\n", msg.c_str());
    return 1;
}

// A running session is asked through its supervisor (helper/sandbox/ipc/control.h),
// which serves one request at a time under the freeze rule (docs/history.md).
base::Result<control::Reply> ask_running(const session::Info& s, const control::Request& q) {
    auto r = control::ask(s.dir, q);
    if (!r) return base::error(q.op + " of session '" + s.meta.name + "': " + r.error().message);
    return r;
}

// A session name has no '/' (base::valid_session_name): a path, or a name
// ending in .tar.zst, is a patch (./NAME for any other file name).
bool looks_like_patch(const std::string& arg) {
    return arg.find('/') != std::string::npos || (arg.size() > 8 && arg.compare(arg.size() - 8, 8, ".tar.zst") == 0);
}

struct Row {
    steps::Record rec;
    bool live = false;
    uint64_t bytes = 0;
    int added = 0, modified = 0, deleted = 0;
};

uint64_t layer_bytes(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? 0 : session::tree_usage(fd).bytes;
}

void count(Row* r) {
    for (const auto& t : r->rec.paths) {
        if (t.kind == "A") r->added++;
        else if (t.kind == "D") r->deleted++;
        else r->modified++;
    }
}

// The live upper's touched paths, read as the session's owner (the program
// may have left mode-000 dirs), in a child; JSON back through the pipe. The
// frozen steps' paths a freeze left pending are computed (and written) first.
base::Result<steps::Record> live_record(const session::Info& s) {
    auto text = capture::in_owner_ns([&]() -> base::Result<std::string> {
        auto settled = steps::settle(s.dir, s.meta.target);
        if (!settled) return settled.error().context("computing the frozen steps' paths");
        TRY(int frozen, steps::count(s.dir));
        steps::Record r;
        r.n = frozen + 1;
        TRY(r.paths, steps::touched_layer(session::upper_dir(s.dir), s.dir, frozen, s.meta.target));
        return steps::record_to_text(r);
    });
    if (!text) return text.error();
    TRY(steps::Record r, steps::record_from_text(text.value()));
    auto live = steps::read_live(s.dir);
    if (live) {
        r.label = live->label;
        r.start = live->start;
    }
    return r;
}

// The session's rows: the live changes (when any) then the steps, newest first.
base::Result<std::vector<Row>> load_rows(const session::Info& s) {
    auto live = live_record(s);
    if (!live) return base::error("session '" + s.meta.name + "': reading its layers: " + live.error().message);
    auto recs = steps::read_all(s.dir);
    if (!recs) return base::error("session '" + s.meta.name + "': " + recs.error().message);
    std::vector<Row> rows;
    if (!live->paths.empty()) {
        Row r;
        r.rec = std::move(live.value());
        r.live = true;
        r.bytes = layer_bytes(session::upper_dir(s.dir));
        rows.push_back(std::move(r));
    }
    for (auto it = recs->rbegin(); it != recs->rend(); ++it) {
        Row r;
        r.rec = std::move(*it);
        auto layer = steps::layer_path(s.dir, r.rec.n);
        r.bytes = layer ? layer_bytes(layer.value()) : 0;
        rows.push_back(std::move(r));
    }
    for (auto& r : rows) count(&r);
    return rows;
}

}  // namespace

int cmd_log(int argc, char** argv) {
    bool json = false, named = false;  // named: a SESSION given, even an empty one (refused)
    std::string name;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--json") {
            json = true;
        } else if (a == "-h" || a == "--help") {
            std::puts(kUsage);
            std::puts("  --json   one JSON object: the session and its steps, each with its touched paths");
            return 0;
        } else if (!a.empty() && a[0] == '-') {
            return cli::unknown_option("log", a, kUsage);
        } else if (!named) {
            name = a, named = true;
        } else {
            return cli::usage_error("log", "more than one session given");
        }
    }
    if (looks_like_patch(name)) {
        // A saved patch's records: read by layover-patch, as `show --steps`.
        std::vector<char*> args = {const_cast<char*>("show"), name.data(), const_cast<char*>("--steps")};
        if (json) args.push_back(const_cast<char*>("--json"));
        args.push_back(nullptr);
        return exec_patch_tool(args.data());
    }
    auto state = session::state_dir();
    if (!state) return fail(state.error().message);
    auto s = named ? session::find(state.value(), name) : session::latest(state.value());
    if (!s) return fail(s.error().message);
    auto loaded = load_rows(s.value());
    if (!loaded) return fail(loaded.error().message);
    std::vector<Row>& rows = loaded.value();
    size_t frozen = rows.size() - (!rows.empty() && rows[0].live ? 1 : 0);
    if (json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& r : rows) {
            nlohmann::json paths = nlohmann::json::array();
            for (const auto& t : r.rec.paths) {
                nlohmann::json o = base::json::path_object(t.path);
                o["kind"] = t.kind;
                paths.push_back(std::move(o));
            }
            arr.push_back({{"step", r.live ? nlohmann::json(nullptr) : nlohmann::json(r.rec.n)},
                           {"live", r.live},
                           {"label", r.rec.label},
                           {"start", r.rec.start},
                           {"end", r.rec.end},
                           {"added", r.added},
                           {"modified", r.modified},
                           {"deleted", r.deleted},
                           {"bytes", r.bytes},
                           {"recorded", !r.rec.missing},
                           {"squashed", r.rec.squashed},
                           {"paths", std::move(paths)}});
        }
        nlohmann::json top = {{"session", s->meta.name}, {"steps", std::move(arr)}};
        std::puts(top.dump(2, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
        return 0;
    }
    std::printf("session '%s': %zu step%s%s\n", base::display_path(s->meta.name).c_str(), frozen,
                frozen == 1 ? "" : "s", rows.empty() || !rows[0].live ? "" : " and live changes");
    for (const auto& r : rows) {
        std::string num = r.live ? "(live)" : std::to_string(r.rec.n);
        std::string when = r.live ? r.rec.start : r.rec.end;
        std::string counts =
            "+" + std::to_string(r.added) + " ~" + std::to_string(r.modified) + " -" + std::to_string(r.deleted);
        std::printf("%6s  %-20s  %-14s %10s B  %s\n", num.c_str(), when.empty() ? "-" : when.c_str(), counts.c_str(),
                    base::thousands(r.bytes).c_str(),
                    ((r.rec.squashed ? "(squashed) " : "") + base::display_path(r.rec.label)).c_str());
    }
    return 0;
}

namespace {

constexpr const char* kBlameUsage =
    "usage: layover blame SESSION [--] PATH   every step that touched PATH, oldest first";

}  // namespace

int cmd_blame(int argc, char** argv) {
    std::vector<std::string> pos;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::puts(kBlameUsage);
            std::puts("  PATH is relative to the session's target (an absolute path inside it works too)");
            return 0;
        }
        if (a == "--") {  // a PATH may start with '-' (a name the agent chose)
            for (i++; i < argc; i++) pos.push_back(argv[i]);
            break;
        }
        if (!a.empty() && a[0] == '-' && a != "-") {
            return cli::unknown_option("blame", a, kBlameUsage);
        }
        pos.push_back(a);
    }
    if (pos.size() != 2) return cli::usage_error("blame", "takes a SESSION and one PATH");
    auto state = session::state_dir();
    if (!state) return fail(state.error().message);
    auto s = session::find(state.value(), pos[0]);
    if (!s) return fail(s.error().message);
    std::string path = pos[1];
    const std::string& t = s->meta.target;
    if (path == t) path.clear();
    else if (path.rfind(t + "/", 0) == 0) path = path.substr(t.size() + 1);
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    if (path.empty() || path[0] == '/')
        return fail(base::display_path(pos[1]) + " is not a path inside the session's target " + t);
    auto loaded = load_rows(s.value());
    if (!loaded) return fail(loaded.error().message);
    int hits = 0;
    for (auto it = loaded->rbegin(); it != loaded->rend(); ++it) {
        for (const auto& p : it->rec.paths) {
            bool exact = p.path == path;
            // A dir deleted or replaced above PATH took PATH with it.
            bool above = !exact && (p.kind == "D" || p.kind == "T") && path.rfind(p.path + "/", 0) == 0;
            if (!exact && !above) continue;
            hits++;
            std::string num = it->live ? "(live)" : std::to_string(it->rec.n);
            std::string when = it->live ? it->rec.start : it->rec.end;
            std::string what = p.kind + (above ? " (" + base::display_path(p.path) + "/)" : "");
            std::printf("%6s  %-20s  %-5s  %s\n", num.c_str(), when.empty() ? "-" : when.c_str(), what.c_str(),
                        base::display_path(it->rec.label).c_str());
        }
    }
    if (hits == 0)
        return fail("no step of session '" + s->meta.name + "' touched " + base::display_path(path) +
                    " (paths are relative to the target " + base::display_path(s->meta.target) + ")");
    return 0;
}

namespace {

constexpr const char* kRollbackUsage =
    "usage: layover rollback SESSION N|--undo   the session's view as it was at the end of step N";

// Nothing set aside (the session ends at step N, no live changes) is said
// so: "0 later steps set aside; --undo brings them back" named an --undo
// that brings back an earlier rollback's steps.
void say_rolled_back(const std::string& name, int n, int moved) {
    if (moved == 0)
        std::fprintf(stderr,
                     "layover: session '%s' is at step %d already, with no live changes; nothing was set aside\n",
                     name.c_str(), n);
    else
        std::fprintf(stderr,
                     "layover: session '%s' rolled back to step %d (%d later step%s set aside, live changes "
                     "included; 'layover rollback %s --undo' brings them back)\n",
                     name.c_str(), n, moved, moved == 1 ? "" : "s", name.c_str());
}

}  // namespace

int cmd_rollback(int argc, char** argv) {
    std::vector<std::string> pos;
    bool undo = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::puts(kRollbackUsage);
            std::puts("  N        0 is the real tree alone; the later steps and the live changes are kept aside");
            std::puts("  --undo   bring back what the last rollback set aside (while nothing was done since)");
            return 0;
        }
        if (a == "--undo") {
            undo = true;
        } else if (!a.empty() && a[0] == '-') {
            return cli::unknown_option("rollback", a, kRollbackUsage);
        } else {
            pos.push_back(a);
        }
    }
    if (pos.size() != (undo ? 1u : 2u))
        return cli::usage_error("rollback",
                                undo ? "--undo takes a SESSION alone" : "takes a SESSION and a step number N");
    int n = 0;
    if (!undo) {
        const std::string& v = pos[1];
        if (v.empty() || v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos)
            return cli::usage_error("rollback", "N must be a step number (see 'layover log')");
        n = std::atoi(v.c_str());
    }
    auto state = session::state_dir();
    if (!state) return fail(state.error().message);
    auto s = session::find(state.value(), pos[0]);
    if (!s) return fail(s.error().message);
    const std::string& name = s->meta.name;
    if (s->state == "running") {
        auto r = ask_running(s.value(), {undo ? "undo" : "rollback", "", undo ? -1 : n});
        if (!r) return fail(r.error().message);
        int moved = r->count;
        if (undo)
            std::fprintf(stderr, "layover: session '%s': the rollback is undone (%d step%s back)\n", name.c_str(),
                         moved, moved == 1 ? "" : "s");
        else say_rolled_back(name, n, moved);
        return 0;
    }
    // Held while the layers move, so a run cannot resume it half-way.
    auto lk = session::lock(s->dir, s->meta.name);
    if (!lk) return fail(lk.error().message);
    // What the exit's scan, an apply or a save recorded no longer describes the view.
    auto forget = [&] {
        session::Meta m = s->meta;
        m.changes = -1;
        m.applied.clear();
        m.undo.clear();
        m.saved.clear();
        (void)session::write_meta(s->dir, m);
        cli::recount_view(s.value(), m);
    };
    if (undo) {
        auto r = capture::in_owner_ns([&]() -> base::Result<std::string> {
            TRY(int back, steps::rollback_undo(s->dir));
            return std::to_string(back);
        });
        if (!r) return fail("session '" + name + "': " + r.error().message);
        int moved = std::atoi(r->c_str());
        forget();
        std::fprintf(stderr, "layover: session '%s': the rollback is undone (%d step%s back)\n", name.c_str(), moved,
                     moved == 1 ? "" : "s");
        return 0;
    }
    auto r = capture::in_owner_ns([&]() -> base::Result<std::string> {
        TRY(int aside, steps::rollback(s->dir, n, s->meta.target));
        return std::to_string(aside);
    });
    if (!r) return fail("session '" + name + "': " + r.error().message);
    int moved = std::atoi(r->c_str());
    if (moved) forget();  // nothing moved: what meta.json recorded still holds
    say_rolled_back(name, n, moved);
    return 0;
}

namespace {

constexpr const char* kForkUsage = "usage: layover fork SESSION NEW [--at N]   a new session from SESSION's steps";

}  // namespace

int cmd_fork(int argc, char** argv) {
    std::vector<std::string> pos;
    std::string at_text;
    bool at_given = false;  // --at "" (an unset variable) is refused, never taken as no --at
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::puts(kForkUsage);
            std::puts("  --at N   from the end of step N (default: all of it, the live changes frozen first)");
            return 0;
        }
        if (a == "--at" && i + 1 >= argc) {
            return cli::usage_error("fork", "--at needs a step number N (see 'layover log')");
        } else if (a == "--at") {
            at_text = argv[++i], at_given = true;
        } else if (a.rfind("--at=", 0) == 0) {
            at_text = a.substr(5), at_given = true;
        } else if (!a.empty() && a[0] == '-') {
            return cli::unknown_option("fork", a, kForkUsage);
        } else {
            pos.push_back(a);
        }
    }
    if (pos.size() != 2) return cli::usage_error("fork", "takes a SESSION and a NEW session name");
    if (at_given &&
        (at_text.empty() || at_text.size() > 4 || at_text.find_first_not_of("0123456789") != std::string::npos))
        return cli::usage_error(
            "fork", "--at takes a step number N (see 'layover log'), not '" + base::display_path(at_text) + "'");
    const std::string& fresh = pos[1];
    if (!base::valid_session_name(fresh))
        return fail("invalid session name '" + base::display_path(fresh) +
                    "': use 1-64 of A-Z a-z 0-9 . _ -, not starting with -");
    auto state = session::state_dir();
    if (!state) return fail(state.error().message);
    auto s = session::find(state.value(), pos[0]);
    if (!s) return fail(s.error().message);
    bool running = s->state == "running";
    std::string dst = session::sessions_dir(state.value()) + "/" + fresh;
    struct stat st;
    if (::lstat(dst.c_str(), &st) == 0) return fail("session '" + fresh + "' exists; pick another name");
    base::Result<base::Fd> lk = running ? base::Fd() : session::lock(s->dir, s->meta.name);
    if (!lk) return fail(lk.error().message);
    for (const auto& stale : steps::stale_forks(session::sessions_dir(state.value())))  // a killed fork's
        steps::remove_flat(stale);
    std::string tmp = session::sessions_dir(state.value()) + "/.fork-" + fresh + "." + std::to_string(::getpid());
    int at = at_given ? std::atoi(at_text.c_str()) : -1;
    // A running session's supervisor builds TMP (named by this pid) under the freeze rule.
    auto by_supervisor = [&]() -> base::Result<std::string> {
        TRY(control::Reply a, control::ask(s->dir, {"fork", "", at, fresh}));
        return std::to_string(a.step);
    };
    auto r = running ? by_supervisor() : capture::in_owner_ns([&]() -> base::Result<std::string> {
        // Without --at the fork takes everything: the live changes become a
        // step of the source first (its view is the same after).
        TRY(std::string pending, steps::finish_pending(s->dir));
        (void)pending;
        if (!at_given) {
            TRY(int frozen, steps::freeze_live(s->dir, s->meta.target, base::utc_now_rfc3339()));
            (void)frozen;
        }
        TRY(int total, steps::count(s->dir));
        int upto = at_given ? at : total;
        if (upto > total)
            return base::error("no step " + std::to_string(upto) + ": the session has steps 1.." +
                               std::to_string(total) + "; see 'layover log'");
        TRY_VOID(steps::fork_steps(s->dir, tmp, upto));
        return std::to_string(upto);
    });
    if (!r) {
        steps::remove_flat(tmp);
        return fail("forking session '" + s->meta.name + "': " + r.error().message);
    }
    session::Meta m = s->meta;
    m.name = fresh;
    m.created = base::utc_now_rfc3339();
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    m.created_ns = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    // Its steps are the source's: their copies were made since the source began.
    m.began_ns = r.value() == "0" ? 0 : session::began_ns(s->meta);
    m.pid = 0;
    m.status = "exited";
    // All of it: the source's view, so its count (none known for a step: a
    // scan here would cost what the fork saves by copying nothing).
    m.changes = !at_given && !running && s->changes_exact ? s->meta.changes : -1;
    m.applied.clear();
    m.undo.clear();
    m.saved.clear();
    m.label = "fork of " + s->meta.name + " at step " + r.value();
    auto wrote = session::write_meta(tmp, m);
    if (wrote) wrote = base::fault_point("fork", "commit");
    if (wrote && ::rename(tmp.c_str(), dst.c_str()) != 0) wrote = base::sys_error("creating session dir " + dst);
    if (!wrote) {
        steps::remove_flat(tmp);
        return fail(wrote.error().message);
    }
    std::fprintf(stderr, "layover: session '%s' forked from '%s' at step %s\n", fresh.c_str(), s->meta.name.c_str(),
                 r.value().c_str());
    return 0;
}
