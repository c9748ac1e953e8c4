#include "helper/store/session/session.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>

#include "helper/base/child.h"
#include "helper/base/clock.h"
#include "helper/base/fs/replace_file.h"
#include "helper/base/json/bytes.h"
#include "helper/base/suggest.h"
#include "helper/base/text.h"
#include "helper/store/layers/steps.h"
#include "helper/store/records/usage.h"
#include "helper/store/records/userns.h"

namespace session {

using base::Error;
using base::Result;
using json = nlohmann::json;

namespace {

Result<void> ensure_private_dir(const std::string& path, bool must_be_private) {
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return base::sys_error("creating state dir " + path);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return base::sys_error("state dir " + path);
    if (!S_ISDIR(st.st_mode))
        return base::error("state dir " + path +
                           " is not a real directory (a symlink or file?); remove it or set LAYOVER_STATE_DIR");
    if (must_be_private && (st.st_uid != ::geteuid() || (st.st_mode & 07777) != 0700))
        return base::error(
            "state dir " + path +
            " must be owned by you with mode 0700; fix: chmod 700 it, or remove it so layover recreates it");
    return base::Ok();
}

}  // namespace

Result<std::string> state_dir() {
    const char* env = std::getenv("LAYOVER_STATE_DIR");
    std::string dir;
    bool is_default = !(env && *env);
    if (!is_default) {
        dir = env;
        if (dir[0] != '/') return base::error("LAYOVER_STATE_DIR must be an absolute path, got '" + dir + "'");
    } else {
        dir = "/var/tmp/layover-" + std::to_string(::geteuid());
    }
    // An explicit dir is the caller's choice, but it must still not be a symlink.
    TRY_VOID(ensure_private_dir(dir, is_default));
    TRY_VOID(ensure_private_dir(sessions_dir(dir), false));
    return dir;
}

std::string sessions_dir(const std::string& state) { return state + "/sessions"; }
std::string trash_dir(const std::string& state) { return state + "/trash"; }
std::string upper_dir(const std::string& d) { return d + "/upper"; }
std::string work_dir(const std::string& d) { return d + "/work"; }

namespace {

std::string draw_name() {
    time_t now = ::time(nullptr);
    struct tm tm;
    ::gmtime_r(&now, &tm);
    char buf[32];
    ::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
    // Two random bytes by getrandom(2): a std::random_device's set-up
    // probes the CPU (cpuid, a trap to the hypervisor in a VM: ~0.035 ms of
    // `run`'s start-up before setup exists, docs/performance.md, "Start-up,
    // ninth pass"). The device only if the call fails.
    unsigned char r[2];
    if (::getrandom(r, sizeof r, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof r)) {
        std::random_device rd;
        r[0] = static_cast<unsigned char>(rd());
        r[1] = static_cast<unsigned char>(rd());
    }
    static const char hex[] = "0123456789abcdef";
    std::string suffix = {hex[r[0] >> 4], hex[r[0] & 15], hex[r[1] >> 4], hex[r[1] & 15]};
    return std::string(buf) + "-" + suffix;
}

}  // namespace

std::string new_name(const std::function<bool(const std::string&)>& taken) {
    std::string name = draw_name();
    for (int i = 1; i < 64 && taken && taken(name); i++) name = draw_name();
    return name;
}

namespace {

// meta.json that parses but is not what write_meta writes (hand-edited, or
// another version's): a field of another type. value() throws then; found by
// the attack pass of 27 Nov: `"pid": "x"` aborted every verb that lists
// sessions (terminate, exit 134), `sessions` included.
Result<Meta> meta_from_json(const std::string& d, const json& j);

// what: "" or " (WHY)". The changes are never the metadata's: say where they are.
base::Error corrupt_meta(const std::string& d, const std::string& what) {
    return base::error("session metadata " + d + "/meta.json is corrupt" + what + "; its changes are still in " + d +
                       "/upper: put meta.json back, or remove " + d);
}

}  // namespace

Result<Meta> read_meta(const std::string& d) {
    TRY(base::Fd fd, base::open_at(AT_FDCWD, d + "/meta.json", O_RDONLY | O_NOFOLLOW));
    TRY(std::string text, base::read_all(fd.get(), 1 << 20));
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return corrupt_meta(d, "");
    try {
        return meta_from_json(d, j);
    } catch (const json::exception& e) {
        return corrupt_meta(d, std::string(" (") + e.what() + ")");
    }
}

namespace {

Result<Meta> meta_from_json(const std::string& d, const json& j) {
    Meta m;
    m.name = j.value("name", "");
    m.target = j.value("target", "");
    m.command = j.value("command", std::vector<std::string>{});
    m.created = j.value("created", "");
    m.created_ns = j.value("created_ns", int64_t{0});
    m.began_ns = j.value("began_ns", int64_t{0});
    m.pid = j.value("pid", int64_t{0});
    m.status = j.value("status", "");
    m.exit_code = j.value("exit_code", -1);
    m.network = j.value("network", "loopback");
    if (j.contains("limits") && j["limits"].is_object()) {
        const json& l = j["limits"];
        m.limits = {l.value("timeout_ms", uint64_t{0}), l.value("max_pids", uint64_t{0}),
                    l.value("max_size", uint64_t{0}),   l.value("max_memory", uint64_t{0}),
                    l.value("min_free", uint64_t{0}),   l.value("min_free_inodes", uint64_t{0})};
    }
    m.stopped = j.value("stopped", "");
    if (j.contains("hidden") && j["hidden"].is_array())
        for (const auto& h : j["hidden"]) {
            std::string raw = h.value("path", "");
            if (h.contains("path_b64") && !base::base64_decode(h.value("path_b64", ""), &raw))
                return corrupt_meta(d, " (hidden path)");
            m.hidden.push_back(raw);
        }
    m.label = j.value("label", "");
    m.changes = j.value("changes", int64_t{-1});
    m.applied = j.value("applied", "");
    m.undo = j.value("undo", "");
    m.saved = j.value("saved", "");
    m.on_exit = j.value("on_exit", "");
    if (j.contains("outside") && j["outside"].is_array())
        for (const auto& o : j["outside"])
            if (o.is_string()) m.outside.push_back(o.get<std::string>());
    return m;
}

}  // namespace

Result<void> write_meta(const std::string& d, const Meta& m) {
    json j = {{"format", "layover-session/1"},
              {"name", m.name},
              {"target", m.target},
              {"command", m.command},
              {"created", m.created},
              {"created_ns", m.created_ns},
              {"pid", m.pid},
              {"status", m.status},
              {"exit_code", m.exit_code},
              {"network", m.network}};
    j["limits"] = {{"timeout_ms", m.limits.timeout_ms}, {"max_pids", m.limits.max_pids},
                   {"max_size", m.limits.max_size},     {"max_memory", m.limits.max_memory},
                   {"min_free", m.limits.min_free},     {"min_free_inodes", m.limits.min_free_inodes}};
    if (m.began_ns > 0) j["began_ns"] = m.began_ns;
    if (!m.stopped.empty()) j["stopped"] = m.stopped;
    json hidden = json::array();
    for (const auto& h : m.hidden) hidden.push_back(base::json::path_object(h));
    j["hidden"] = hidden;
    j["outside"] = m.outside;
    if (!m.label.empty()) j["label"] = m.label;
    j["changes"] = m.changes;
    if (!m.applied.empty()) j["applied"] = m.applied;
    if (!m.undo.empty()) j["undo"] = m.undo;
    if (!m.saved.empty()) j["saved"] = m.saved;
    if (!m.on_exit.empty()) j["on_exit"] = m.on_exit;
    std::string text = j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    return base::replace_file(d + "/meta.json", d + "/.meta.json.tmp", text, "saving session metadata in " + d);
}

// The lock is a flock on the session dir itself: a `lock` file cost one more
// inode creation on every run's start-up (~0.1 ms on this VM's ext4, more
// where many inodes were just freed). Sessions of older versions have one.
Result<base::Fd> lock(const std::string& d, const std::string& name) {
    TRY(base::Fd fd, base::open_at(AT_FDCWD, d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    // is_locked() (status, sessions) holds a shared lock for a few
    // microseconds: a busy answer is asked again for ~20 ms before it is
    // taken as a holder's (one that runs holds it for the whole run).
    bool got = false;
    for (int i = 0; i < 20 && !(got = ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0); i++) {
        if (errno != EWOULDBLOCK) break;
        struct timespec ms {
            0, 1000000
        };
        ::nanosleep(&ms, nullptr);
    }
    if (!got) {
        auto m = read_meta(d);
        // Not a run's (no supervisor): a verb that holds it a moment (discard, checkpoint, gc).
        if (!m || m->status != "running" || m->pid <= 0)
            return base::error("session '" + name +
                               "' is in use by another layover verb (discard, checkpoint, gc...); "
                               "retry once it ends");
        std::string who = " (supervisor pid " + std::to_string(m->pid) + ")";
        return base::error("session '" + name + "' is running" + who +
                           "; stop that run first, or choose another --session name");
    }
    // Locked, but the dir may have moved away from `d` before (a discard to
    // the trash, a gc's removal): a lock of that is none of `d`'s (attack24).
    struct stat held {
    }, now{};
    if (::fstat(fd.get(), &held) != 0 || ::stat(d.c_str(), &now) != 0 || held.st_dev != now.st_dev ||
        held.st_ino != now.st_ino)
        return base::error("session '" + name + "' was discarded or removed meanwhile; see 'layover sessions --trash'");
    // Before the holder writes anything (docs/design.md, "Status again").
    TRY_VOID(bump_gen(fd.get(), name, d));
    return fd;
}

bool is_locked(const std::string& d) {
    // The dir, then an older version's `lock` file (a supervisor still running).
    for (const std::string& p : {d, d + "/lock"}) {
        int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) continue;
        bool locked = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
        ::close(fd);
        if (locked) return true;
    }
    return false;
}

std::string state_from(bool locked, const Meta& m) {
    if (locked) return "running";
    if (m.status == "running") return "crashed";
    if (!m.applied.empty()) return "applied";
    if (!m.saved.empty()) return "saved";
    if (m.changes == 0) return "empty";
    return "kept";
}

std::string crashed_discard_note(const Info& s) {
    if (s.state != "crashed" || s.meta.on_exit != "discard") return "";
    const std::string& n = s.meta.name;
    return "session '" + n + "' was to be discarded (run --on-exit discard), but its layover was killed first: its " +
           "changes are kept; 'layover status " + n + "' lists them, 'layover discard " + n + "' drops them";
}

bool holds_history(const std::string& d) {
    auto n = steps::count(d);
    if (!n.ok() || n.value() > 0) return true;
    std::string rb = steps::rolled_back_dir(d);
    struct stat st;
    return ::stat((rb + "/at").c_str(), &st) == 0 && ::stat((rb + "/expired").c_str(), &st) != 0;
}

std::string state_of(const std::string& d, const Meta& m) {
    std::string s = state_from(is_locked(d), m);
    // No change against the real tree, but steps (or a rollback's set-aside
    // ones) to trace or bring back: kept, never `empty`, which gc removes.
    return s == "empty" && holds_history(d) ? "kept" : s;
}

Result<void> mark_applied(const std::string& d, const std::string& undo_record) {
    TRY(Meta m, read_meta(d));
    m.applied = base::utc_now_rfc3339();
    m.undo = undo_record;
    return write_meta(d, m);
}

Result<void> set_changes(const std::string& d, int64_t changes) {
    TRY(Meta m, read_meta(d));
    m.changes = changes;
    return write_meta(d, m);
}

Result<void> mark_saved(const std::string& d, const std::string& file) {
    TRY(Meta m, read_meta(d));
    m.saved = file;
    return write_meta(d, m);
}

namespace {

Info make_info(const std::string& d, Meta m, bool with_size) {
    Info info;
    info.dir = d;
    info.state = state_of(d, m);
    if (with_size) {
        int up = ::open(upper_dir(d).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (up >= 0) {
            Usage u = tree_usage(up);
            info.upper_bytes = u.bytes;
            info.changes = static_cast<int64_t>(u.entries);
        }
    }
    if (m.changes >= 0 && info.state != "running" && info.state != "crashed") {
        info.changes = m.changes;
        info.changes_exact = true;
    } else if (with_size && info.state != "running" && info.state != "crashed") {
        // No count recorded (a fork at a step): the live layer's says nothing
        // of what the steps hold, so none (`?`) rather than a wrong `~0`.
        auto n = steps::count(d);
        if (!n || n.value() > 0) info.changes = -1;
    }
    info.age_days = (static_cast<int64_t>(::time(nullptr)) - m.created_ns / 1000000000) / 86400;
    info.meta = std::move(m);
    return info;
}

}  // namespace

Result<std::vector<Info>> list(const std::string& state, bool trash, bool with_size) {
    std::string root = trash ? trash_dir(state) : sessions_dir(state);
    std::vector<Info> out;
    DIR* d = ::opendir(root.c_str());
    if (!d) {
        if (errno == ENOENT) return out;
        return base::sys_error("listing " + root);
    }
    while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n == "." || n == ".." || n[0] == '.') continue;
        auto m = read_meta(root + "/" + n);
        if (!m) continue;
        out.push_back(make_info(root + "/" + n, std::move(m.value()), with_size));
    }
    ::closedir(d);
    std::sort(out.begin(), out.end(),
              [](const Info& a, const Info& b) { return a.meta.created_ns < b.meta.created_ns; });
    return out;
}

Result<Info> latest(const std::string& state) {
    TRY(auto all, list(state));
    if (all.empty()) return base::error("no sessions yet; start one with 'layover run'");
    return all.back();
}

std::string directory_given(const std::string& state, const std::string& name, const std::string& what) {
    struct stat st;
    char buf[PATH_MAX];
    if (::stat(name.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || !::realpath(name.c_str(), buf)) return "";
    std::string newest;
    if (auto all = list(state))
        for (const auto& s : *all)
            if (s.meta.target == buf) newest = s.meta.name;  // oldest first
    return "'" + base::display_path(name) + "' is a directory, not " + what + ": name a session (" +
           (newest.empty() ? "none is over " + base::display_path(buf) + "; 'layover sessions' lists them)"
                           : "the most recent over " + base::display_path(buf) + " is '" + newest +
                                 "'; 'layover sessions' lists them)");
}

Result<Info> find(const std::string& state, const std::string& name) {
    if (name.empty())
        return base::error(
            "the session name is empty (an unset variable?); name a session: 'layover sessions' "
            "lists them");
    if (!base::valid_session_name(name)) {
        if (std::string dir = directory_given(state, name); !dir.empty()) return base::error(dir);
        return base::error("invalid session name '" + base::display_path(name) +
                           "': use 1-64 of A-Z a-z 0-9 . _ -, not starting with -");
    }
    std::string d = sessions_dir(state) + "/" + name;
    auto m = read_meta(d);
    if (!m) {
        // There, but unreadable (its mode, a corrupt meta.json): said so, never
        // "no session named" (found by the attack pass of 27 Nov; `sessions`
        // leaves it out, so the user took it for gone).
        struct stat st;
        if (m.error().code != ENOENT && ::lstat(d.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
            return base::error("session '" + name + "' cannot be read: " + m.error().message);
        if (read_meta(trash_dir(state) + "/" + name))  // discarded (the exit prompt's [d], `discard`)
            return base::error("no session named '" + name + "': it is in the trash (discarded); 'layover restore " +
                               name + "' brings it back");
        // A typo (`agnet1`) or the start of a generated name: the session it likely meant.
        std::vector<std::string> names;
        if (auto all = list(state))
            for (const auto& s : *all) names.push_back(s.meta.name);
        std::string near = base::nearest_name(name, names);
        if (std::string dir = directory_given(state, name); near.empty() && !dir.empty())
            return base::error("no session named '" + name + "': " + dir);
        return base::error("no session named '" + name + "'" +
                           (near.empty() ? std::string() : " (did you mean '" + near + "'?)") +
                           "; list them with 'layover sessions'");
    }
    return make_info(d, std::move(m.value()), false);
}

Result<void> remove_tree(const std::string& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return base::Ok();
        return base::sys_error("removing " + path);
    }
    // A child enters the owner namespace (it must be single-threaded, and the
    // caller must keep its own credentials), then removes with full access.
    auto child = base::spawn([&]() -> int {
        if (!userns::enter_owner_ns()) {
            // Fall back to plain removal as the caller (works unless mode 000).
        }
        pid_t rm = ::fork();
        if (rm == 0) {
            ::execl("/bin/rm", "rm", "-rf", "--one-file-system", "--", path.c_str(), (char*)nullptr);
            ::_exit(127);
        }
        int s = 0;
        while (::waitpid(rm, &s, 0) < 0 && errno == EINTR) {
        }
        return WIFEXITED(s) ? WEXITSTATUS(s) : 1;
    });
    if (!child) return child.error();
    TRY(int status, child->wait());
    if (base::exit_code_of(status) != 0 || ::lstat(path.c_str(), &st) == 0)
        return base::error("could not remove " + path + " completely; remove it by hand");
    return base::Ok();
}

}  // namespace session
