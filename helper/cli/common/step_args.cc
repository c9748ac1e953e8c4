#include "helper/cli/common/step_args.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>

#include "capture/scan/walk/session_scan.h"
#include "helper/base/text.h"
#include "helper/store/layers/step_view.h"
#include "helper/store/layers/steps.h"

namespace cli {

namespace {

bool number(const std::string& v, int* out) {
    if (v.empty() || v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoi(v);
    return *out >= 1;
}

}  // namespace

int parse_step_flag(int argc, char** argv, int* i, const char* allowed, StepArgs* a) {
    std::string* err = &a->error;
    std::string arg = argv[*i], flag = arg, value;
    bool inline_value = false;
    if (auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
        flag = arg.substr(0, eq);
        value = arg.substr(eq + 1);
        inline_value = true;
    }
    if (flag != "--step" && flag != "--steps" && flag != "--upto") return 0;
    if (std::string(" ").append(allowed).append(" ").find(" " + flag + " ") == std::string::npos) return 0;
    if (!inline_value) {
        if (*i + 1 >= argc) {
            *err = flag + " needs a step number (see 'layover log')";
            return 1;
        }
        value = argv[++*i];
    }
    if (a->given()) {
        *err = "give one of --step, --steps and --upto, once";
        return 1;
    }
    if (flag == "--steps") {
        auto dots = value.find("..");
        if (dots == std::string::npos || !number(value.substr(0, dots), &a->from) ||
            !number(value.substr(dots + 2), &a->to)) {
            *err = "--steps takes N..M, two step numbers (see 'layover log'), not '" + value + "'";
            return 1;
        }
        if (a->from > a->to) {
            *err = "--steps " + value + ": the first step is after the last; write the lower number first";
            return 1;
        }
        a->kind = StepArgs::Kind::Range;
        return 1;
    }
    if (!number(value, &a->to)) {
        *err = flag + " takes a step number from 1 (see 'layover log'), not '" + value + "'";
        return 1;
    }
    a->from = flag == "--upto" ? 1 : a->to;
    a->kind = flag == "--upto" ? StepArgs::Kind::Upto : StepArgs::Kind::Range;
    return 1;
}

base::Result<capture::StepRange> resolve_steps(const StepArgs& a, const session::Info& s, const char* verb) {
    const std::string& name = s.meta.name;
    // A running session too: frozen steps never change; nothing squashes a
    // running session's stack, and its rollback moves whole layers (docs/history.md).
    (void)verb;
    auto recs = steps::read_all(s.dir);
    if (!recs) return base::error("session '" + name + "': " + recs.error().message);
    int total = static_cast<int>(recs->size());
    if (a.to > total)
        return base::error("session '" + name + "' has no step " + std::to_string(a.to) +
                           (total ? " (it has steps 1.." + std::to_string(total) + ")" : " (it has no frozen steps)") +
                           "; see 'layover log " + name + "'");
    // Where the range begins and ends must be a layer boundary: the end of
    // step from-1 and of step to (a squashed step's end is inside a layer).
    for (int n : {a.from - 1, a.to})
        if (n >= 1 && (*recs)[static_cast<size_t>(n - 1)].squashed)
            return base::error("step " + std::to_string(n) + " of session '" + name +
                               "' is out of reach: it was squashed into a later step (see 'layover log " + name + "')");
    capture::StepRange r;
    r.from = a.from;
    r.to = a.to;
    return r;
}

std::string step_flag_on_patch(const std::string& source, const StepArgs& a, const char* flags) {
    if (!a.given()) return "";
    struct stat st;
    // The caller's "layover: VERB: " prefixes it (it said "diff: diff: ..."),
    // and `log FILE` lists a patch's steps: what it lacks is their layers.
    if (source.find('/') != std::string::npos || (::stat(source.c_str(), &st) == 0 && S_ISREG(st.st_mode)))
        return base::display_path(source) + " is a patch file: it carries its steps' records ('layover log " +
               base::display_path(source) + "'), not their layers; " + flags + " the session it was saved from";
    return "";
}

base::Result<capture::StepRange> steps_of_source(const std::string& source, const StepArgs& a, const char* flags) {
    if (!a.given()) return capture::StepRange{};
    if (std::string why = step_flag_on_patch(source, a, flags); !why.empty()) return base::error(why);
    TRY(std::string state, session::state_dir());
    TRY(session::Info info, session::find(state, source));
    return resolve_steps(a, info, flags);
}

base::Result<capture::StepRange> compare_range(const session::Info& a, const session::Info& b) {
    for (const auto* s : {&a, &b})
        if (s->state == "running")
            return base::error("session '" + s->meta.name + "' is running (supervisor pid " +
                               std::to_string(s->meta.pid) + "); stop it first: compare reads kept sessions");
    if (a.dir == b.dir) return base::error("compare takes two different sessions ('" + a.meta.name + "' twice)");
    if (a.meta.target != b.meta.target)
        return base::error("sessions '" + a.meta.name + "' and '" + b.meta.name + "' have different targets (" +
                           a.meta.target + ", " + b.meta.target +
                           "); compare sessions of one target, e.g. forks of one session");
    capture::StepRange r;
    r.against = a.dir;
    return r;
}

base::Result<capture::StepRange> diff_range(std::string* source, std::vector<std::string>* paths, size_t dashdash_at,
                                            const StepArgs& a) {
    struct stat st;
    bool file = source->find('/') != std::string::npos || (::stat(source->c_str(), &st) == 0 && S_ISREG(st.st_mode));
    if (a.given() || file || paths->empty() || dashdash_at == 0 || !base::valid_session_name((*paths)[0]))
        return steps_of_source(*source, a, "--step and --steps take");
    TRY(std::string state, session::state_dir());
    auto b = session::find(state, (*paths)[0]);
    if (!b) return capture::StepRange{};  // a path, not a session
    TRY(session::Info first, session::find(state, *source));
    TRY(capture::StepRange r, compare_range(first, b.value()));
    *source = b->meta.name;
    paths->erase(paths->begin());
    return r;
}

base::Result<base::Fd> old_side_view(const std::string& source, const capture::StepRange& r) {
    if (r.against.empty() && r.from <= 1) return base::Fd();
    TRY(std::string state, session::state_dir());
    TRY(session::Info info, session::find(state, source));
    if (r.against.empty()) return steps::open_view(info.dir, r.from - 1, info.meta.target);
    TRY(int below, steps::count(r.against));
    return steps::open_view(r.against, below, info.meta.target, true);
}

void recount_view(session::Info s, const session::Meta& m) {
    s.meta = m;
    auto n = capture::count_changes_in_child(s);
    if (n.ok() && n.value() > 0) (void)session::set_changes(s.dir, n.value());
}

}  // namespace cli
