#include "review/prompt/kept_walk.h"

#include <limits.h>
#include <stdlib.h>

#include <cstdio>

#include "helper/base/text.h"
#include "helper/store/session/session.h"
#include "review/prompt/answers.h"
#include "review/prompt/io.h"

namespace review {

namespace {

std::string real_of(const std::string& path) {
    char buf[PATH_MAX];
    return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

}  // namespace

std::string kept_answers_place(const capture::Patch& patch, const std::string& target, const std::string& session_dir) {
    auto state = session::state_dir();
    if (!state.ok()) return "";
    std::string source = patch.from_session() ? "session\n" + patch.manifest().session + "\n" + session_dir
                                              : "patch\n" + real_of(patch.file());
    return answers_file(*state, source, real_of(target));
}

base::Result<WalkResult> walk_keeping(const capture::Patch& patch, const std::string& target, const std::string& place,
                                      WalkOptions wo, const std::string& lead, KeptWalk* kept) {
    Answers saved;
    if (!place.empty()) {
        auto loaded = load_answers(place);
        if (!loaded.ok())
            std::fprintf(stderr, "%sthe answers kept from the last try cannot be read (%s); asking them all\n",
                         lead.c_str(), loaded.error().message.c_str());
        if (loaded.ok() && !loaded->given.empty()) {
            size_t n = loaded->given.size();
            std::string ans;
            if (ask(lead + "the last hunk-by-hunk review ('apply -p', or the exit prompt's hunks) of this " +
                        std::string(patch.from_session() ? "session" : "patch") + " to " + base::display_path(target) +
                        " did not apply; reuse its " + std::to_string(n) + (n == 1 ? " answer" : " answers") +
                        "? [Y/n] ",
                    &ans) != Input::Line) {
                WalkResult r;
                r.interrupted = true;
                return r;
            }
            std::string a = normalize_answer(ans);
            if (a.empty() || a == "y" || a == "yes") {
                saved = std::move(*loaded);
                wo.saved = &saved;
            }
        }
    }
    TRY(WalkResult w, walk_hunks(patch, wo));
    if (w.interrupted) return w;
    if (wo.saved)
        std::fprintf(stderr, "%sreused %zu of the %zu answer(s) kept from the last try; what differs was asked again\n",
                     lead.c_str(), w.reused, saved.given.size());
    if (place.empty()) return w;
    if (w.taken == 0) {
        drop_answers(place);
        return w;
    }
    w.answers.owner = patch.from_session() ? wo.session_dir : real_of(patch.file());
    if (auto s = save_answers(place, w.answers); s.ok()) {
        kept->file = place;
        kept->count = w.answers.given.size();
    } else {
        std::fprintf(stderr, "%syour answers could not be kept for another try: %s\n", lead.c_str(),
                     s.error().message.c_str());
    }
    return w;
}

}  // namespace review
