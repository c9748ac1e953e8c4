#include "review/prompt/walk_rejections.h"

#include <cstdio>

#include "helper/base/clock.h"
#include "helper/base/text.h"
#include "review/prompt/io.h"
#include "review/prompt/rejected_patch.h"

namespace review {

void WalkRejections::reject(const capture::Change& c, size_t hunk, const Side& real, const Side& mine,
                            const FileHunks* f) {
    const std::string& path = c.path;
    if (session_dir_.empty()) return;
    std::string why;
    if (ask("Why not? (one line for the agent, Enter for none): ", &why) != Input::Line) return;
    while (!why.empty() && (why.back() == ' ' || why.back() == '\r')) why.pop_back();
    if (auto p = session::reason_problem(why); !p.empty()) {
        std::fprintf(stderr, "layover: reason not recorded: %s\n", p.c_str());
        why.clear();
    }
    if (!prints_) {
        prints_.emplace();
        prints_->change = change_fingerprint(c, mine);
        if (f) prints_->hunks = hunk_fingerprints(f->a, f->b, f->groups, f->spans);
    }
    SideOf session_of = [&](const std::string&) -> base::Result<Side> { return mine; };
    SideOf real_of = [&](const std::string&) -> base::Result<Side> { return real; };
    auto rec = make_rejection(path, hunk, why, base::utc_now_rfc3339(), patch_.manifest().changes, session_of, real_of,
                              &*prints_);
    if (rec.ok()) rejected_.push_back(std::move(*rec));
    else std::fprintf(stderr, "layover: rejection not recorded: %s\n", rec.error().message.c_str());
}

void WalkRejections::record() {
    size_t n = 0;
    for (auto& rec : rejected_) {
        auto added = session::add_rejection(session_dir_, std::move(rec));
        if (added.ok()) n++;
        else std::fprintf(stderr, "layover: rejection not recorded: %s\n", added.error().message.c_str());
    }
    rejected_.clear();
    if (n)
        std::fprintf(stderr,
                     "layover: recorded %zu rejection(s) in session '%s' ('layover rejections %s' lists them)\n", n,
                     base::display_path(patch_.manifest().session).c_str(),
                     base::display_path(patch_.manifest().session).c_str());
}

// As `layover reject` and the judge of rejections read it from the session's
// layers (helper/cli/session/session_rejections.cc), here from the patch as the judge
// of a patch's rejections does (rejected_patch.h): a file's bytes (past
// 64 MiB, its size), a symlink's target, nothing else. The walk loads only
// modified text files; an added file's rejection took an empty side, and was
// superseded ("changed since") as soon as it was made.
Side WalkRejections::session_side(const capture::Change& c) const {
    auto s = patch_sides(patch_)(c.path);
    if (s) return std::move(s.value());
    Side unread;  // there, but its bytes could not be read
    unread.exists = true;
    unread.loaded = false;
    return unread;
}

}  // namespace review
