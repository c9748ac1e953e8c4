#include "helper/cli/apply_rejected.h"

#include <fcntl.h>

#include <algorithm>
#include <cstdio>

#include "helper/base/fd.h"
#include "helper/base/glob.h"
#include "helper/base/text.h"
#include "helper/store/rejections.h"
#include "helper/store/session.h"
#include "review/diff/source.h"
#include "review/prompt/rejected.h"

namespace {

constexpr uint64_t kMaxLoad = 64ull << 20;  // as `layover diff` loads

// An --exclude glob that matches exactly `path` from the target's root.
std::string exact_glob(const std::string& path) {
    std::string g = "/";
    for (char c : path) {
        if (c == '*' || c == '?' || c == '[' || c == '\\') g += '\\';
        g += c;
    }
    return g;
}

// The patch's new entry at `path` as a diff side.
base::Result<review::Side> patch_side(const capture::Patch& patch, const std::string& path) {
    review::Side s;
    const capture::Member* m = nullptr;
    for (const auto& x : patch.members())
        if (x.path == path) m = &x;
    if (!m) return s;
    if (m->kind == capture::Member::Kind::Symlink) {
        s.exists = true;
        s.mode = review::kGitSymlink;
        s.data = m->link_target;
        s.size = s.data.size();
        return s;
    }
    std::string data_path = path;
    if (m->kind == capture::Member::Kind::Hardlink) data_path = m->link_target;
    else if (m->kind != capture::Member::Kind::File) return s;
    s.exists = true;
    s.mode = review::git_file_mode(m->mode);
    s.size = m->size;
    if (m->size > kMaxLoad) {
        s.loaded = false;
        return s;
    }
    TRY(s.data, patch.read_file(data_path, kMaxLoad));
    return s;
}

}  // namespace

review::SideOf patch_sides(const capture::Patch& patch) {
    return [&patch](const std::string& p) { return patch_side(patch, p); };
}

base::Result<void> skip_rejected(const capture::Patch& patch, const std::string& target, review::ApplyOptions* opts) {
    if (!patch.from_session()) return base::Ok();
    TRY(std::string state, session::state_dir());
    TRY(session::Info info, session::find(state, patch.manifest().session));
    TRY(session::Rejections recs, session::read_rejections(info.dir));
    if (recs.list.empty()) return base::Ok();
    TRY(base::Fd root, base::open_at(AT_FDCWD, target, O_PATH | O_DIRECTORY));
    review::SideOf session_side = patch_sides(patch);
    review::SideOf real_side = [&](const std::string& p) { return review::read_real_side(root.get(), p, kMaxLoad); };
    TRY(auto states, review::judge_rejections(recs.list, patch.manifest().changes, session_side, real_side));
    base::PathFilter selected(opts->only, opts->exclude);
    std::vector<std::string> skipped, superseded;
    for (const auto& s : states) {
        if (!s.in_force) {
            if (s.why == "changed since") superseded.push_back(review::rejection_line(s));
            continue;
        }
        if (!selected.selects(s.rec.path)) continue;
        if (s.rec.hunk == 0) {
            opts->exclude.push_back(exact_glob(s.rec.path));
        } else {
            auto& choice = opts->hunks[s.rec.path];
            // An explicit --hunks PATH:N takes the hunk all the same.
            if (std::find(choice.take.begin(), choice.take.end(), s.hunk_now) != choice.take.end()) continue;
            choice.leave.push_back(s.hunk_now);
        }
        skipped.push_back(review::rejection_line(s));
    }
    if (!skipped.empty()) {
        std::fprintf(stderr, "layover: apply: skipping %zu rejected change(s) (--include-rejected applies them):\n",
                     skipped.size());
        for (const auto& l : skipped) std::fprintf(stderr, "  %s\n", l.c_str());
    }
    for (const auto& l : superseded) std::fprintf(stderr, "layover: apply: not skipped: %s\n", l.c_str());
    return base::Ok();
}
