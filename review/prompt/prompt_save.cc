#include "review/prompt/prompt_save.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "capture/patch/save.h"
#include "helper/base/glob.h"
#include "helper/base/text.h"
#include "review/prompt/io.h"
#include "review/prompt/rejected_patch.h"
#include "review/prompt/save_secrets.h"

namespace review {

namespace {

// STATE/patches when the current directory lies in the target; "" when not.
std::string save_dir_aside(const std::string& state, const capture::Patch& patch) {
    char cwd[PATH_MAX], target[PATH_MAX];
    if (!::getcwd(cwd, sizeof cwd) || !::realpath(patch.manifest().target.c_str(), target)) return "";
    std::string t = target;
    if (t != "/" && !base::path_is_under(cwd, t)) return "";
    return state + "/patches";
}

}  // namespace

bool save_from_prompt(const std::string& state, const session::Info& s, const capture::Patch& patch,
                      const PickScope& picked, const std::vector<RejectionState>& rejections) {
    char stamp[32];
    time_t now = ::time(nullptr);
    struct tm tm;
    ::localtime_r(&now, &tm);
    ::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    std::string def = std::string("./layover-") + stamp + ".tar.zst", path;
    // Not in the tree it patches (the run's directory usually is): there
    // the file would be a new entry of the user's project, or home.
    std::string aside = save_dir_aside(state, patch);
    if (!aside.empty()) {
        def = aside + "/" + def.substr(2);
        std::fprintf(stderr,
                     "layover: the current directory is in the target; by default the patch goes to %s, "
                     "outside it\n",
                     base::display_path(aside).c_str());
    }
    Input in = ask("Save patch to [" + base::display_path(def) + "]: ", &path);
    if (in != Input::Line) return false;
    bool by_default = normalize_answer(path).empty();
    path = by_default ? def : path;
    if (by_default && !aside.empty() && ::mkdir(aside.c_str(), 0700) != 0 && errno != EEXIST) {
        std::fprintf(stderr, "layover: saving %s: cannot create %s: %s\n", base::display_path(path).c_str(),
                     base::display_path(aside).c_str(), std::strerror(errno));
        return true;
    }
    // No shell reads the answer: a leading ~/ (or ~ alone) is $HOME, as run's save:~/FILE.
    path = base::expand_home(path == "~" ? "~/" : path, std::getenv("HOME"));
    struct stat st;
    if (path.back() == '/' || (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)))  // the file goes in it
        path += (path.back() == '/' ? "" : "/") + def.substr(def.rfind('/') + 1);
    if (::lstat(path.c_str(), &st) == 0) {
        std::string yn;
        if (ask(base::display_path(path) + " exists. Overwrite it? [y/N] ", &yn) != Input::Line) return false;
        if (normalize_answer(yn) != "y" && normalize_answer(yn) != "yes") {
            std::fprintf(stderr, "layover: not saved; %s is as it was ([s] asks for another file)\n",
                         base::display_path(path).c_str());
            return true;
        }
    }
    capture::SaveOptions so;
    so.only = picked.only, so.exclude = picked.exclude;
    std::vector<std::string> superseded;  // named at the summary's R lines already
    auto left = leave_out_rejected(rejections, patch, patch.manifest().target, &so, &superseded);
    if (!left) {
        std::fprintf(stderr, "layover: saving %s: %s\n", base::display_path(path).c_str(),
                     left.error().message.c_str());
        return true;
    }
    if (!left->empty()) std::fprintf(stderr, "layover: leaving out %zu rejected change(s)\n", left->size());
    scan_saved_secrets(&so);  // warned of as `layover save` does: the file may be shared
    std::string secrets_saved;
    auto r = capture::save_session(s, path, so, &secrets_saved);
    if (!r) {
        std::fprintf(stderr, "layover: saving %s: %s\n", base::display_path(path).c_str(), r.error().message.c_str());
        return true;
    }
    std::fprintf(stderr, "layover: saved %s; the session is still here: [d] discards it, [k] keeps it\n",
                 base::display_path(path).c_str());
    char real[PATH_MAX];
    (void)session::mark_saved(s.dir, ::realpath(path.c_str(), real) ? real : path);
    warn_saved_secrets(secrets_saved);
    return true;
}

}  // namespace review
