// `layover sessions`, `layover discard`, `layover restore`.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "helper/base/text.h"
#include "helper/cli/common/usage.h"
#include "helper/cli/common/verbs.h"
#include "helper/cli/session/discard_rejected.h"
#include "helper/sandbox/prepare/discard.h"
#include "helper/sandbox/supervisor/finish.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/steps.h"
#include "helper/store/session/layer_gc.h"
#include "helper/store/session/session.h"
#include "review/prompt/answers.h"
#include "review/prompt/trash.h"

namespace {

int fail(const std::string& msg) {
    std::fprintf(stderr, "layover: %s\n", msg.c_str());
    return 1;
}

int64_t age_seconds(const session::Meta& m) {
    int64_t now = static_cast<int64_t>(::time(nullptr));
    return m.created_ns > 0 ? std::max<int64_t>(0, now - m.created_ns / 1000000000) : 0;
}

std::string human_age(int64_t s) {
    if (s < 60) return std::to_string(s) + "s";
    if (s < 3600) return std::to_string(s / 60) + "m";
    if (s < 86400) return std::to_string(s / 3600) + "h";
    return std::to_string(s / 86400) + "d";
}

// What the user started: the label (a Python Sandbox's "python: Sandbox(...)")
// or the command line, shortened to one screen line.
std::string what_started(const session::Meta& m) {
    std::string w = m.label;
    if (w.empty())
        for (const auto& a : m.command) w += (w.empty() ? "" : " ") + a;
    if (w.size() > 60) w = w.substr(0, 57) + "...";
    return w;
}

const char kSessionsUsage[] = "usage: layover sessions [--json] [--trash]";

}  // namespace

int cmd_sessions(int argc, char** argv) {
    bool json = false, trash = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--json") json = true;
        else if (a == "--trash") trash = true;
        else if (a == "-h" || a == "--help") {
            std::printf(
                "%s\n"
                "List the sessions: name, state, age, size, steps, changes, and what started each.\n"
                "  --json   the same as JSON, one object per session\n"
                "  --trash  the discarded sessions instead (kept 24 hours; 'layover restore NAME')\n"
                "States: running, crashed (its supervisor died), applied, saved, empty, kept.\n",
                kSessionsUsage);
            return 0;
        } else {
            return cli::unknown_option("sessions", a, kSessionsUsage);
        }
    }
    auto state = session::state_dir();
    if (!state) return fail(state.error().message);
    purge_old_trash(state.value());
    auto all = session::list(state.value(), trash, true);
    if (!all) return fail(all.error().message);
    // All of a session's layers (docs/history.md, "Life cycle"): a layer of
    // the store shared by forks counts in each session, once in the total.
    std::map<std::string, uint64_t> shared;
    bool forked = false;  // a layer of the store that two sessions refer to
    std::map<std::string, int> refs;
    std::vector<uint64_t> sizes, shared_sizes;
    for (const auto& s : all.value()) {
        auto size = steps::session_size(s.dir, &shared, &s.upper_bytes);
        std::set<std::string> mine;
        for (const auto& id : size.shared)
            if (mine.insert(id).second) forked |= ++refs[id] > 1;
        sizes.push_back(size.bytes);
        shared_sizes.push_back(size.store_bytes);
    }
    if (json) {
        nlohmann::json arr = nlohmann::json::array();
        for (size_t i = 0; i < all->size(); i++) {
            const auto& s = (*all)[i];
            nlohmann::json o = {
                {"name", s.meta.name},
                {"target", s.meta.target},
                {"created", s.meta.created},
                {"status", trash ? "trash" : s.state},
                {"state", s.state},
                {"upper_bytes", s.upper_bytes},
                {"command", s.meta.command},
                {"label", s.meta.label.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.meta.label)},
                {"what", what_started(s.meta)},
                {"changes", s.changes},
                {"changes_exact", s.changes_exact},
                {"pid", s.state == "running" ? s.meta.pid : 0},
                {"exit_code", s.meta.exit_code},
                {"age_days", s.age_days},
                {"age_seconds", age_seconds(s.meta)}};
            // Frozen steps (docs/history.md); -1 when the steps dir is not layover's.
            auto nsteps = steps::count(s.dir);
            o["steps"] = nsteps ? nsteps.value() : -1;
            o["bytes"] = sizes[i];               // every layer of the session
            o["store_bytes"] = shared_sizes[i];  // the part held in the layer store (forks share it)
            auto opt = [](const std::string& v) { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); };
            o["applied"] = opt(s.meta.applied);
            o["undo"] = opt(s.meta.undo);
            o["saved"] = opt(s.meta.saved);
            o["on_exit"] = opt(s.meta.on_exit);  // the last run's; "discard" on a crashed one: see the note below
            arr.push_back(std::move(o));
        }
        std::puts(arr.dump(2, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
        return 0;
    }
    if (all->empty()) {
        std::puts(trash ? "the trash is empty" : "no sessions");
        return 0;
    }
    // Columns as wide as their longest entry (a Python session's default name has 25 characters).
    int name_w = 24, state_w = 8;
    for (const auto& s : *all) {
        name_w = std::max(name_w, static_cast<int>(s.meta.name.size()));
        state_w = std::max(state_w, static_cast<int>(s.state.size() + (trash ? 6 : 0)));
    }
    std::printf("%-*s %-*s %5s %7s %5s %7s  %s\n", name_w, "NAME", state_w, "STATE", "AGE", "SIZE", "STEPS", "CHANGES",
                "WHAT");
    bool old = false;
    uint64_t total = 0;
    for (size_t i = 0; i < all->size(); i++) {
        const auto& s = (*all)[i];
        total += sizes[i] - shared_sizes[i];
        std::string changes = s.changes < 0 ? "?" : (s.changes_exact ? "" : "~") + std::to_string(s.changes);
        std::string shown = trash ? "trash:" + s.state : s.state;
        auto nsteps = steps::count(s.dir);  // frozen steps (docs/history.md); ? when steps/ is not layover's
        std::string steps_text = nsteps ? std::to_string(nsteps.value()) : "?";
        std::printf("%-*s %-*s %5s %7s %5s %7s  %s\n", name_w, s.meta.name.c_str(), state_w, shown.c_str(),
                    human_age(age_seconds(s.meta)).c_str(), base::bytes_short(sizes[i]).c_str(), steps_text.c_str(),
                    changes.c_str(), base::display_path(what_started(s.meta)).c_str());
        if (!trash && s.age_days >= 20) old = true;
    }
    // Steps live in the layer store even without a fork: the line is for layers two sessions share.
    if (forked) {
        for (const auto& [id, bytes] : shared) total += bytes;
        std::printf("(layers shared by forks count in each session; all together: %s)\n",
                    base::bytes_short(total).c_str());
    }
    if (!trash)
        for (const auto& s : *all)
            if (std::string note = session::crashed_discard_note(s); !note.empty())
                std::fprintf(stderr, "layover: %s\n", note.c_str());
    if (old)
        std::fprintf(stderr,
                     "layover: warning: some sessions are 20+ days old; systemd-tmpfiles deletes /var/tmp entries "
                     "after 30 days: save them with 'layover save NAME -o FILE'\n");
    return 0;
}

namespace {

// One line: what is wrong and where the usage is (tests/integration/test_usage_errors.py).
int discard_usage(const std::string& why) { return cli::usage_error("discard", why); }

int restore_usage(const std::string& why) { return cli::usage_error("restore", why); }

// `discard NAME --now` of a trash entry: its exit code, or nullopt when NAME
// names no trash entry (the caller then says what find() said).
std::optional<int> discard_trashed_now(const std::string& state, const std::string& name) {
    std::string dir = session::trash_dir(state) + "/" + name;
    if (!base::valid_session_name(name) || !session::read_meta(dir)) return std::nullopt;
    auto r = remove_aside(state, dir, "now");
    if (!r) return fail(r.error().message);
    (void)steps::sweep_store(state, false);  // its layers no other session refers to; gc drops its answers
    std::fprintf(stderr, "layover: deleted '%s' from the trash, for good\n", name.c_str());
    return 0;
}

}  // namespace

int cmd_discard(int argc, char** argv) {
    // discard SESSION: to the trash (as the exit prompt's [d]); --now deletes
    // at once; --rejected drops only the rejected changes (discard_rejected.cc).
    const char* usage = "usage: layover discard SESSION [--now | --rejected]\n";
    const char* name = nullptr;
    bool now = false, rejected = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::printf(
                "%s"
                "  (default)   move the session to the trash for 24 hours ('layover restore NAME' brings it back)\n"
                "  --now       delete the session at once, for good (a trash entry too: 'layover sessions --trash')\n"
                "  --rejected  drop only the changes a person rejected ('layover reject'), keep the session\n",
                usage);
            return 0;
        }
        if (a == "--now") now = true;
        else if (a == "--rejected") rejected = true;
        else if (a[0] == '-') return cli::unknown_option("discard", a, usage);
        else if (!name) name = argv[i];
        else return discard_usage("one SESSION at a time (got '" + base::display_path(a) + "' too)");
    }
    if (!name) return discard_usage("missing SESSION");
    if (now && rejected) return discard_usage("--now or --rejected, not both");
    auto state = session::state_dir();
    if (!state) return fail(state.error().message);
    auto s = session::find(state.value(), name);
    if (!s && now) {
        // NAME a trash entry (as `restore` takes it): deleted from the trash
        // at once, so its space comes back without a restore first (newuser18).
        if (auto trashed = discard_trashed_now(state.value(), name)) return *trashed;
    }
    if (!s) return fail(s.error().message);
    if (rejected) return discard_rejected(s.value());
    if (s->state == "running")
        return fail("session '" + s->meta.name + "' is running (supervisor pid " + std::to_string(s->meta.pid) +
                    "); stop it first");
    if (!now) {
        auto t = review::move_to_trash(state.value(), s.value());
        if (!t) return fail(t.error().message);
        std::fprintf(stderr, "layover: %s\n", review::trashed_line(s->meta.name, *t).c_str());
        return 0;
    }
    // Hold the lock while removing, so a run cannot resume it half-way.
    auto lk = session::lock(s->dir, s->meta.name);
    if (!lk) return fail(lk.error().message);
    // Moved aside first, out of sessions/: a kill during a long removal
    // (an agent's 20,000 files) leaves the rest in STATE/deleting/, which
    // the next remover sweeps, never an unlisted dir in sessions/.
    auto r = remove_aside(state.value(), s->dir, "now");
    if (!r) return fail(r.error().message);
    (void)steps::sweep_store(state.value(), false);  // the layers no other session refers to go too
    review::drop_answers_of(state.value(), s->dir);  // its kept `apply -p` answers (review/prompt/answers.h)
    std::fprintf(stderr, "layover: discarded session '%s'\n", s->meta.name.c_str());
    return 0;
}

int cmd_restore(int argc, char** argv) {
    if (argc == 2 && (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help"))) {
        std::puts("usage: layover restore NAME   bring a discarded session back (see 'layover sessions --trash')");
        return 0;
    }
    if (argc >= 2 && argv[1][0] == '-') return restore_usage("unknown option '" + base::display_path(argv[1]) + "'");
    if (argc < 2) return restore_usage("missing NAME (the trash entry: 'layover sessions --trash' lists them)");
    if (argc > 2) return restore_usage("one NAME at a time (got '" + base::display_path(argv[2]) + "' too)");
    std::string name = argv[1];
    if (!base::valid_session_name(name)) return fail("invalid session name '" + base::display_path(name) + "'");
    auto state = session::state_dir();
    if (!state) return fail(state.error().message);
    // NAME is the trash entry (a second discard of the same name is NAME.1, ...);
    // the session comes back under the name in its metadata.
    std::string from = session::trash_dir(state.value()) + "/" + name;
    auto meta = session::read_meta(from);
    if (!meta) return fail("no session '" + name + "' in the trash; see 'layover sessions --trash'");
    std::string back = base::valid_session_name(meta->name) ? meta->name : name;
    std::string to = session::sessions_dir(state.value()) + "/" + back;
    struct stat st;
    if (::lstat(to.c_str(), &st) == 0)
        return fail("a session named '" + back + "' exists already; discard it first, then restore");
    name = back;
    if (::rename(from.c_str(), to.c_str()) != 0) return fail(base::sys_error("restoring " + name).message);
    std::fprintf(stderr, "layover: restored session '%s'\n", name.c_str());
    return 0;
}
