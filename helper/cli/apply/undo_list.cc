#include "helper/cli/apply/undo_list.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "capture/scan/walk/session_scan.h"
#include "helper/base/fd.h"
#include "helper/base/text.h"
#include "helper/store/session/session.h"
#include "overlay/mountinfo.h"
#include "review/apply/records.h"
#include "review/apply/recover_pending.h"

namespace {

base::Result<std::vector<review::RecordInfo>> records_of(const std::string& target,
                                                         std::vector<review::DamagedRecord>* damaged = nullptr) {
    TRY(std::string state, session::state_dir());
    TRY(base::Fd root, base::open_at(AT_FDCWD, target, O_RDONLY | O_DIRECTORY));
    return review::list_records(state, root.get(), target, damaged);
}

std::string other_target(const std::string& target);
std::optional<review::RecordInfo> newer_apply_here(const std::string& target, const review::RecordInfo& newest);

}  // namespace

base::Result<std::string> undo_target(const std::string& dir) {
    std::string want = dir;
    if (want.empty()) {
        const char* home = std::getenv("HOME");
        if (!home || !*home) return base::error("no --target given and HOME is unset; pass --target DIR");
        want = home;
    }
    char buf[PATH_MAX];
    if (!::realpath(want.c_str(), buf)) {
        if (errno == ENOENT)
            return base::error("target " + base::display_path(want) +
                               " does not exist; pass --target DIR, the tree an apply changed");
        return base::sys_error("target " + base::display_path(want)).context("pass --target DIR, an existing tree");
    }
    return std::string(buf);
}

int undo_list(const std::string& target, bool json, bool target_given) {
    std::vector<review::DamagedRecord> damaged;
    auto all = records_of(target, &damaged);
    if (!all.ok()) {
        std::fprintf(stderr, "layover: undo: %s\n", all.error().message.c_str());
        return 1;
    }
    // A damaged record is left out of the list, each with a note (the list of the others stands).
    for (const auto& d : damaged) std::fprintf(stderr, "layover: undo: not listed: %s\n", d.message.c_str());
    // A killed apply or undo is in no list: say so, and how it is taken back (docs/security.md, "Crash safety").
    if (auto state = session::state_dir(); state.ok() && review::journal_pending(*state, target))
        std::fprintf(stderr,
                     "layover: undo: an apply or undo on %s was interrupted, or is running now; "
                     "'layover undo --last --target %s' takes it back\n",
                     base::display_path(target).c_str(), base::display_path(target).c_str());
    if (json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& r : *all)
            arr.push_back({{"id", r.id},
                           {"record", r.dir},
                           {"target", r.target},
                           {"source", r.source},
                           {"created", r.created},
                           {"paths", r.paths},
                           {"bytes", r.bytes},
                           {"in_target", !r.in_state}});
        std::puts(arr.dump(2, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
        return 0;
    }
    if (all->empty()) {
        std::printf("no undo records for %s\n", base::display_path(target).c_str());
        // --target left out (the default is $HOME) while the applies were on a project: name one, as --last does.
        if (std::string other = other_target(target); !other.empty())
            std::fprintf(stderr,
                         "layover: undo: the newest apply elsewhere was on %s: 'layover undo --list --target %s'\n",
                         base::display_path(other).c_str(), base::display_path(other).c_str());
        return 0;
    }
    // --target left out: a tree holding the current dir applied to since is
    // not in this list; say where its records are, as --last does.
    if (!target_given)
        if (auto here = newer_apply_here(target, all->front()))
            std::fprintf(stderr,
                         "layover: undo: these are the records of %s; the current directory is in %s, applied to "
                         "since: 'layover undo --list --target %s' lists its records\n",
                         base::display_path(target).c_str(), base::display_path(here->target).c_str(),
                         base::display_path(here->target).c_str());
    std::printf("%-22s %6s %9s  %-30s %s\n", "CREATED", "PATHS", "SIZE", "SOURCE", "RECORD");
    for (const auto& r : *all)
        std::printf("%-22s %6zu %8lluK  %-30s %s\n", base::display_path(r.created.substr(0, 19)).c_str(), r.paths,
                    static_cast<unsigned long long>((r.bytes + 1023) / 1024), base::display_path(r.source).c_str(),
                    base::display_path(r.dir).c_str());
    return 0;
}

namespace {

// The target of the newest apply not on `target` that an undo record (in the
// state dir) keeps: one holding the current dir first. "" when none.
std::string other_target(const std::string& target) {
    auto state = session::state_dir();
    if (!state) return "";
    auto all = review::list_state_records(*state);
    if (!all || all->empty()) return "";
    char cwd[PATH_MAX];
    std::string here = ::getcwd(cwd, sizeof cwd) ? cwd : "";
    const review::RecordInfo* best = nullptr;
    for (const auto& r : *all) {
        if (r.target == target) continue;
        bool a = !here.empty() && overlay::path_within(here, r.target);
        bool b = best && !here.empty() && overlay::path_within(here, best->target);
        if (!best || a > b || (a == b && r.created_ns > best->created_ns)) best = &r;
    }
    return best ? best->target : "";
}

// The newest record, newer than `newest` (the target's own newest), of a
// tree other than `target` that holds the current dir; none when none.
std::optional<review::RecordInfo> newer_apply_here(const std::string& target, const review::RecordInfo& newest) {
    auto state = session::state_dir();
    if (!state) return std::nullopt;
    auto all = review::list_state_records(*state);
    char cwd[PATH_MAX];
    if (!all || !::getcwd(cwd, sizeof cwd)) return std::nullopt;
    std::optional<review::RecordInfo> best;
    for (auto& r : *all)
        if (r.target != target && overlay::path_within(cwd, r.target) && r.created_ns > newest.created_ns &&
            (!best || r.created_ns > best->created_ns))
            best = std::move(r);
    return best;
}

}  // namespace

base::Result<std::string> newest_record(const std::string& target, bool target_given) {
    std::vector<review::DamagedRecord> damaged;
    TRY(auto all, records_of(target, &damaged));
    // Its time cannot be read: passing over it could undo an older apply than the newest.
    if (!damaged.empty())
        return base::error("--last stops at a damaged record, which may be the newest apply: " + damaged[0].message);
    if (all.empty()) {
        std::string msg = "no undo record for " + base::display_path(target) +
                          "; nothing was applied there (or it was undone already)";
        // A target left out (undo's default is $HOME) or mistyped: name the tree last applied to.
        std::string other = other_target(target);
        if (!other.empty())
            return base::error(msg + "; the newest apply elsewhere was on " + base::display_path(other) +
                               ": undo it with '" + review::undo_command(other) + "'");
        return base::error(msg + "; see 'layover undo --list --target DIR'");
    }
    // --target left out: $HOME's newest apply is not the one meant when the
    // current dir lies in a tree applied to since (a project): say which is which.
    if (!target_given) {
        auto here = newer_apply_here(target, all.front());
        if (here)
            return base::error("--last without --target undoes the newest apply on " + base::display_path(target) +
                               " (" + base::display_path(all.front().created.substr(0, 19)) + ", from " +
                               base::display_path(all.front().source) + "), but the current directory is in " +
                               base::display_path(here->target) + ", applied to since (" +
                               base::display_path(here->created.substr(0, 19)) + ", from " +
                               base::display_path(here->source) + "): undo that one with '" +
                               review::undo_command(here->target) + "', or the older one with '" +
                               review::undo_command(target) + "'");
    }
    return all.front().dir;
}

void unmark_undone(const std::string& record, const std::string& source, const std::string& target) {
    auto state = session::state_dir();
    if (!state) return;
    if (auto s = session::find(*state, source); s.ok() && s->meta.target == target && s->state != "running")
        capture::recount_changes(s.value());
    // The record's last two components (DEV-INO/ID or .layover-undo/ID; the
    // ID is random): its dir is gone now, so no realpath, and the path given
    // may be spelled otherwise than apply recorded it.
    auto tail = [](std::string p) {
        if (p.ends_with("/undo.json")) p.resize(p.size() - 10);
        while (p.size() > 1 && p.back() == '/') p.pop_back();
        size_t a = p.rfind('/');
        size_t b = a == std::string::npos || a == 0 ? std::string::npos : p.rfind('/', a - 1);
        return b == std::string::npos ? p : p.substr(b + 1);
    };
    std::string want = tail(record);
    for (bool trash : {false, true}) {
        auto all = session::list(*state, trash);
        if (!all) continue;
        for (auto& s : *all) {
            if (s.meta.applied.empty() || s.meta.undo.empty() || tail(s.meta.undo) != want) continue;
            s.meta.applied.clear();
            s.meta.undo.clear();
            (void)session::write_meta(s.dir, s.meta);
            // The exit prompt's apply moved it there: its changes are only there now.
            if (trash) {
                std::string entry = base::display_path(s.dir.substr(s.dir.rfind('/') + 1));  // NAME or NAME.1...
                std::fprintf(stderr,
                             "layover: undo: session '%s', whose apply this was, is in the trash for 24 hours; "
                             "'layover restore %s' brings it back\n",
                             base::display_path(s.meta.name).c_str(), entry.c_str());
            }
        }
    }
}

std::string applied_before_note(const std::string& target, const std::string& file) {
    char buf[PATH_MAX];
    std::string want = ::realpath(file.c_str(), buf) ? std::string(buf) : file;
    auto all = records_of(target);
    if (!all) return "";
    for (size_t i = 0; i < all->size(); i++) {
        const review::RecordInfo& r = (*all)[i];
        std::string src = ::realpath(r.source.c_str(), buf) ? std::string(buf) : r.source;
        if (src != want) continue;
        // --last only when that apply is the newest (records are newest first).
        std::string undo = i == 0 ? review::undo_command(target) : "layover undo " + base::display_path(r.dir);
        return "note: this patch was applied to " + base::display_path(target) + " already, at " +
               base::display_path(r.created.substr(0, 19)) + " UTC: the conflicts may be its own changes ('" + undo +
               "' takes that apply back; 'layover undo --list --target " + base::display_path(target) +
               "' lists the applies)";
    }
    return "";
}
