// `layover gc`: prune sessions, trash and undo records, and say what it freed.
//   by default   empty sessions; applied (or saved, their file still there)
//                sessions older than --older-than (default 30d); trash older
//                than 24 hours; undo records past retention (--keep-undo N
//                newest per target, and all younger than --keep-undo-days D)
//   --applied    every applied session, whatever its age
//   --trash      every trash entry, whatever its age (empties the trash)
//   --older-than AGE given: kept and crashed sessions older than AGE too
//                (their work is not applied anywhere: listed first)
//   --dry-run    list what would go; remove nothing
// Also `apply -p`'s kept answers whose session or patch is gone or applied,
// or unused for --older-than. A running session is never touched; neither is an undo record of a target
// with an apply or undo under way (or its journal pending recovery).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "helper/base/text.h"
#include "helper/cli/common/usage.h"
#include "helper/cli/common/verbs.h"
#include "helper/sandbox/prepare/discard.h"
#include "helper/store/session/layer_gc.h"
#include "helper/store/session/session.h"
#include "review/apply/records.h"
#include "review/prompt/answers.h"
#include "review/txn/journal.h"

namespace {

const char kGcUsage[] =
    "usage: layover gc [--older-than AGE] [--applied] [--trash] [--dry-run] [--keep-undo N] [--keep-undo-days D]\n"
    "Prune sessions, trash and undo records; report what was freed. Never touches a running session.\n"
    "  (default)            empty sessions; applied or saved sessions older than 30d; trash older\n"
    "                       than 24h; undo records past retention; kept 'apply -p' answers whose\n"
    "                       session or patch is gone or applied, or unused for 30d\n"
    "  --older-than AGE     age for applied/saved sessions (30d, 12h, 2w...); given, it also prunes\n"
    "                       kept and crashed sessions older than AGE (unapplied work: listed first)\n"
    "  --applied            every applied session, whatever its age\n"
    "  --trash              every trash entry, whatever its age (empties the trash)\n"
    "  --dry-run            list what would be removed; remove nothing\n"
    "  --keep-undo N        undo records kept per target, newest first (default 20)\n"
    "  --keep-undo-days D   undo records younger than D days are kept too (default 30)\n";

int usage(const std::string& why) { return cli::usage_error("gc", why); }

struct Item {
    std::string what;  // "session", "trash", "undo record"
    std::string path;
    std::string note;
    uint64_t bytes = 0;        // a session's size as `sessions` shows it (steps::session_size)
    uint64_t store_bytes = 0;  // the part of it in the layer store: freed by the sweep, when it is
    bool unapplied = false;    // kept work: listed first
    std::string name;          // session name (sessions only)
    review::RecordInfo record;
};

// A session's or trash entry's size: the one `sessions` shows.
void size_of(const std::string& dir, std::map<std::string, uint64_t>* store_cache, Item* it) {
    auto size = steps::session_size(dir, store_cache);
    it->bytes = size.bytes;
    it->store_bytes = size.store_bytes;
}

bool file_exists(const std::string& p) {
    struct stat st {};
    return !p.empty() && ::stat(p.c_str(), &st) == 0;
}

struct Options {
    int64_t older_than = 30 * 86400;
    bool older_given = false, applied = false, dry_run = false, trash = false;
    review::Retention retention;
};

void pick_sessions(const std::string& state, const Options& o, std::map<std::string, uint64_t>* store_cache,
                   std::vector<Item>* out) {
    auto all = session::list(state);
    if (!all.ok()) return;
    int64_t now = static_cast<int64_t>(::time(nullptr));
    for (const auto& s : *all) {
        int64_t age = now - s.meta.created_ns / 1000000000;
        bool old = age >= o.older_than;
        Item it{"session", s.dir, s.state, 0, 0, false, s.meta.name, {}};
        if (s.state == "running") continue;
        if (s.state == "empty") it.note = "empty";
        else if (s.state == "applied" && (o.applied || old)) it.note = "applied " + s.meta.applied;
        else if (s.state == "saved" && old && file_exists(s.meta.saved)) it.note = "saved to " + s.meta.saved;
        else if ((s.state == "kept" || s.state == "crashed") && o.older_given && old) {
            it.note = s.state + ", NOT applied";
            it.unapplied = true;
        } else {
            if (std::string note = session::crashed_discard_note(s); !note.empty())
                std::fprintf(stderr, "layover: gc: %s\n", note.c_str());
            continue;
        }
        size_of(s.dir, store_cache, &it);
        out->push_back(std::move(it));
    }
}

void pick_trash(const std::string& state, const Options& o, std::map<std::string, uint64_t>* store_cache,
                std::vector<Item>* out) {
    auto all = session::list(state, true);
    if (!all.ok()) return;
    time_t now = ::time(nullptr);
    for (const auto& s : *all) {
        struct stat st {};
        // The trash entry's ctime is when it was moved there (review/prompt/trash.h).
        if (::stat(s.dir.c_str(), &st) != 0 || (!o.trash && now - st.st_ctime <= 24 * 3600)) continue;
        Item it{"trash", s.dir, s.state, 0, 0, false, s.meta.name, {}};
        size_of(s.dir, store_cache, &it);
        out->push_back(std::move(it));
    }
}

void pick_records(const std::string& state, const Options& o, std::vector<Item>* out) {
    auto all = review::list_state_records(state);
    if (!all.ok()) return;
    int64_t now = static_cast<int64_t>(::time(nullptr));
    // Newest first within each target: one selection per run of equal keys.
    for (size_t i = 0; i < all->size();) {
        size_t j = i;
        std::vector<int64_t> times;
        while (j < all->size() && (*all)[j].key == (*all)[i].key) times.push_back((*all)[j++].created_s);
        for (size_t k : review::select_pruned(times, o.retention, now)) {
            const auto& r = (*all)[i + k];
            out->push_back({"undo record", r.dir,
                            "of " + base::display_path(r.target) + ", " + base::display_path(r.created), r.bytes, 0,
                            false, "", r});
        }
        i = j;
    }
}

// `apply -p`'s kept answers (review/prompt/answers.h) once what they were
// for is gone: their session discarded, removed (by this gc too) or applied,
// their patch file deleted; or not saved again for --older-than (30d); a
// save's temporary left for 24h; a file that cannot be read, after 24h.
void pick_answers(const std::string& state, const Options& o, std::vector<Item>* out) {
    auto files = review::list_kept_answers(state);
    if (files.empty()) return;
    std::map<std::string, std::string> sessions;  // dir -> state
    if (auto all = session::list(state); all.ok())
        for (const auto& s : *all) sessions[s.dir] = s.state;
    for (const auto& it : *out)
        if (it.what == "session") sessions[it.path] = "removed";
    int64_t now = static_cast<int64_t>(::time(nullptr));
    std::string sessions_dir = state + "/sessions/";
    for (const auto& f : files) {
        int64_t age_of = now - f.mtime_s;
        std::string note;
        auto s = sessions.find(f.owner);
        bool of_session = s != sessions.end() || f.owner.compare(0, sessions_dir.size(), sessions_dir) == 0;
        if (f.temporary || !f.readable) {
            if (age_of < 24 * 3600) continue;
            note = f.temporary ? "left by an interrupted save" : "cannot be read";
        } else if (f.owner.empty()) {
            if (age_of < o.older_than) continue;
            note = "not used for " + std::to_string(age_of / 86400) + "d";
        } else if (of_session && (s == sessions.end() || s->second == "removed")) {
            note = "their session is gone";
        } else if (of_session && s->second == "applied") {
            note = "their session was applied";
        } else if (!of_session && !file_exists(f.owner)) {
            note = "their patch file is gone";
        } else if (age_of >= o.older_than) {
            note = "not used for " + std::to_string(age_of / 86400) + "d";
        } else {
            continue;
        }
        Item it{"kept apply -p answers", f.file, note, f.bytes, 0, false, "", {}};
        out->push_back(std::move(it));
    }
}

// Removes one item; "" or why it was left.
std::string remove_item(const std::string& state, const Item& it) {
    if (it.what == "undo record") {
        // As apply and undo do: under the target's lock, and never under a pending journal.
        auto lock = review::lock_target(state, it.record.key, it.record.target);
        if (!lock.ok()) return lock.error().message;
        struct stat st {};
        if (::stat(review::journal_path(state, it.record.key).c_str(), &st) == 0)
            return "an apply or undo on its target was interrupted; run 'layover undo --list --target DIR' there first";
        auto r = review::remove_record(state, -1, it.record);
        return r.ok() ? "" : r.error().message;
    }
    if (it.what == "kept apply -p answers") {
        if (int e = review::drop_answers(it.path); e != 0 && e != ENOENT) return std::strerror(e);
        return "";
    }
    if (it.what == "session") {
        auto lk = session::lock(it.path, it.name);  // a run resuming it now wins; it is left
        if (!lk.ok()) return lk.error().message;
        auto r = remove_aside(state, it.path, "gc");  // as discard --now: never half a session in sessions/
        return r.ok() ? "" : r.error().message;
    }
    auto r = remove_aside(state, it.path, "gc");  // a trash entry: never half of one for `restore`
    return r.ok() ? "" : r.error().message;
}

}  // namespace

int cmd_gc(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&](std::string* v) {
            size_t eq = a.find('=');
            if (eq != std::string::npos) {
                *v = a.substr(eq + 1);
                a.resize(eq);
                return true;
            }
            if (i + 1 >= argc) return false;
            *v = argv[++i];
            return true;
        };
        std::string v, flag = a.substr(0, a.find('='));
        if (a == "-h" || a == "--help") {
            std::fputs(kGcUsage, stdout);
            return 0;
        } else if (a == "--applied") {
            o.applied = true;
        } else if (a == "--trash") {
            o.trash = true;
        } else if (a == "--dry-run" || a == "-n") {
            o.dry_run = true;
        } else if (flag == "--older-than") {
            if (!value(&v)) return usage("--older-than needs an age, e.g. 30d");
            o.older_than = review::parse_age(v);
            if (o.older_than < 0) return usage("--older-than: bad age '" + v + "'; use e.g. 30d, 12h, 2w, 90m");
            o.older_given = true;
        } else if (flag == "--keep-undo" || flag == "--keep-undo-days") {
            if (!value(&v) || v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos)
                return usage(flag + " takes a whole number, e.g. " + (flag == "--keep-undo" ? "20" : "30"));
            if (flag == "--keep-undo") o.retention.keep = std::stoul(v);
            else o.retention.keep_days = std::stoll(v);
        } else {
            return cli::unknown_option("gc", a, kGcUsage);
        }
    }
    auto state = session::state_dir();
    if (!state) {
        std::fprintf(stderr, "layover: gc: %s\n", state.error().message.c_str());
        return 1;
    }
    // What a killed remover (a gc, discard --now or run's exit) left in STATE/deleting/.
    if (!o.dry_run) purge_deleting(*state);
    std::vector<Item> items;
    std::map<std::string, uint64_t> store_cache;
    pick_sessions(*state, o, &store_cache, &items);
    pick_trash(*state, o, &store_cache, &items);
    pick_records(*state, o, &items);
    pick_answers(*state, o, &items);
    std::stable_partition(items.begin(), items.end(), [](const Item& it) { return it.unapplied; });

    size_t removed = 0;
    uint64_t freed = 0;
    bool failed = false;
    for (const auto& it : items) {
        std::string why = o.dry_run ? "" : remove_item(*state, it);
        if (!why.empty()) {
            std::fprintf(stderr, "layover: gc: left %s %s: %s\n", it.what.c_str(), base::display_path(it.path).c_str(),
                         why.c_str());
            failed = true;
            continue;
        }
        // A layer the store holds goes with the sweep below (if no other session refers to it): counted there.
        std::string size = base::bytes_text(it.bytes);
        if (it.store_bytes > 0) size += ", " + base::bytes_text(it.store_bytes) + " of it in the layer store";
        std::printf("%s %s %s (%s; %s)\n", o.dry_run ? "would remove" : "removed", it.what.c_str(),
                    base::display_path(it.name.empty() ? it.path : it.name).c_str(), it.note.c_str(), size.c_str());
        removed++;
        freed += it.bytes - it.store_bytes;
    }
    // Rolled-back layers on the trash's 24-hour clock, then the layer store's
    // layers no session refers to any more (docs/history.md, "Life cycle").
    for (const auto& name : steps::expire_rolled_back(*state, 24 * 3600, o.dry_run))
        std::printf("%s the layers a rollback of session %s set aside (older than 24h)\n",
                    o.dry_run ? "would remove" : "removed", base::display_path(name).c_str());
    auto swept = steps::sweep_store(*state, o.dry_run);
    if (!swept) {
        std::fprintf(stderr, "layover: gc: left the layer store as it is: %s\n", swept.error().message.c_str());
        failed = true;
    } else if (!swept->ids.empty()) {
        std::printf("%s %zu layer(s) no session refers to (%s)\n", o.dry_run ? "would remove" : "removed",
                    swept->ids.size(), base::bytes_text(swept->bytes).c_str());
        removed += swept->ids.size();
        freed += swept->bytes;
    }
    std::printf("%s %zu item(s), %s (%llu bytes)\n", o.dry_run ? "gc --dry-run: would free" : "gc: freed", removed,
                base::bytes_text(freed).c_str(), static_cast<unsigned long long>(freed));
    return failed ? 1 : 0;
}
