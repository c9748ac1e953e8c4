#include "review/prompt/rejected_patch.h"

#include <fcntl.h>

#include <algorithm>
#include <map>
#include <set>

#include "helper/base/fd.h"
#include "helper/base/glob.h"
#include "helper/store/records/rejections.h"
#include "review/diff/hunks.h"
#include "review/diff/source.h"

namespace review {

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
base::Result<Side> patch_side(const capture::Patch& patch, const std::string& path) {
    Side s;
    const capture::Member* m = nullptr;
    for (const auto& x : patch.members())
        if (x.path == path) m = &x;
    if (!m) return s;
    if (m->kind == capture::Member::Kind::Symlink) {
        s.exists = true;
        s.mode = kGitSymlink;
        s.data = m->link_target;
        s.size = s.data.size();
        return s;
    }
    std::string data_path = path;
    if (m->kind == capture::Member::Kind::Hardlink) data_path = m->link_target;
    else if (m->kind != capture::Member::Kind::File) return s;
    s.exists = true;
    s.mode = git_file_mode(m->mode);
    s.size = m->size;
    if (m->size > kMaxLoad) {
        s.loaded = false;
        return s;
    }
    TRY(s.data, patch.read_file(data_path, kMaxLoad));
    return s;
}

SideOf real_sides(int root) {
    return [root](const std::string& p) { return read_real_side(root, p, kMaxLoad); };
}

// The rejections in force and selected that another of them takes whole
// already: a path beneath a rejected dir, a hunk of a file rejected whole.
// They leave nothing more out, so they are neither named nor counted (the
// exit prompt's [s] said 'leaving out 4' for 2).
std::vector<char> taken_by_others(const std::vector<RejectionState>& states, const base::PathFilter& selected) {
    std::set<std::string, std::less<>> whole;
    for (const auto& s : states)
        if (s.in_force && s.rec.hunk == 0 && selected.selects(s.rec.path)) whole.insert(s.rec.path);
    std::vector<char> out(states.size(), 0);
    for (size_t i = 0; i < states.size(); i++) {
        std::string_view p = states[i].rec.path;
        out[i] = (states[i].rec.hunk != 0 && whole.count(p)) || base::has_ancestor_in(p, whole) ? 1 : 0;
    }
    return out;
}

}  // namespace

SideOf patch_sides(const capture::Patch& patch) {
    return [&patch](const std::string& p) { return patch_side(patch, p); };
}

base::Result<std::vector<RejectionState>> patch_rejections(const capture::Patch& patch, const std::string& session_dir,
                                                           const std::string& target) {
    TRY(session::Rejections recs, session::read_rejections(session_dir));
    if (recs.list.empty()) return std::vector<RejectionState>{};
    TRY(base::Fd root, base::open_at(AT_FDCWD, target, O_PATH | O_DIRECTORY));
    return judge_rejections(recs.list, patch.manifest().changes, patch_sides(patch), real_sides(root.get()));
}

base::Result<std::vector<std::string>> leave_out_rejected(const std::vector<RejectionState>& states,
                                                          const capture::Patch& patch, const std::string& target,
                                                          capture::SaveOptions* opts,
                                                          std::vector<std::string>* superseded) {
    if (states.empty()) return std::vector<std::string>{};
    TRY(base::Fd root, base::open_at(AT_FDCWD, target, O_PATH | O_DIRECTORY));
    return leave_out_rejected(states, patch_sides(patch), real_sides(root.get()), opts, superseded);
}

std::vector<std::string> skip_in_force(const std::vector<RejectionState>& states, ApplyOptions* opts,
                                       std::vector<std::string>* superseded) {
    base::PathFilter selected(opts->only, opts->exclude);
    auto taken = taken_by_others(states, selected);
    std::vector<std::string> skipped;
    for (size_t i = 0; i < states.size(); i++) {
        const auto& s = states[i];
        if (!s.in_force) {
            if (s.why == "changed since") superseded->push_back(rejection_line(s));
            continue;
        }
        if (!selected.selects(s.rec.path) || taken[i]) continue;
        if (s.rec.hunk == 0) {
            opts->exclude.push_back(exact_glob(s.rec.path));
        } else {
            auto& choice = opts->hunks[s.rec.path];
            // An explicit --hunks PATH:N takes the hunk all the same.
            if (std::find(choice.take.begin(), choice.take.end(), s.hunk_now) != choice.take.end()) continue;
            choice.leave.push_back(s.hunk_now);
        }
        skipped.push_back(rejection_line(s));
    }
    return skipped;
}

base::Result<std::vector<std::string>> leave_out_rejected(const std::vector<RejectionState>& states,
                                                          const SideOf& session_side, const SideOf& real_side,
                                                          capture::SaveOptions* opts,
                                                          std::vector<std::string>* superseded) {
    base::PathFilter selected(opts->only, opts->exclude);  // what the save leaves out anyway is not counted
    auto taken = taken_by_others(states, selected);
    std::vector<std::string> skipped;
    std::map<std::string, std::vector<size_t>> hunks;
    for (size_t i = 0; i < states.size(); i++) {
        const auto& s = states[i];
        if (!s.in_force) {
            if (s.why == "changed since") superseded->push_back(rejection_line(s));
            continue;
        }
        if (!selected.selects(s.rec.path) || taken[i]) continue;
        if (s.rec.hunk == 0) opts->exclude.push_back(exact_glob(s.rec.path));
        else hunks[s.rec.path].push_back(s.hunk_now);
        skipped.push_back(rejection_line(s));
    }
    base::PathFilter excluded({}, opts->exclude);
    for (const auto& [path, numbers] : hunks) {
        if (excluded.excluded(path)) continue;
        TRY(Side real, real_side(path));
        TRY(Side now, session_side(path));
        std::vector<bool> take(count_hunks(real.data, now.data), true);
        for (size_t n : numbers)
            if (n >= 1 && n <= take.size()) take[n - 1] = false;
        std::string content = apply_hunks(real.data, now.data, take);
        if (content == real.data) opts->exclude.push_back(exact_glob(path));
        else opts->contents[path] = std::move(content);
    }
    return skipped;
}

std::vector<RejectionState> picked_only(const std::vector<RejectionState>& states,
                                        const std::vector<capture::Change>& changes,
                                        const std::vector<char>& selected) {
    std::set<std::string, std::less<>> unpicked;
    for (size_t i = 0; i < changes.size() && i < selected.size(); i++)
        if (!selected[i]) unpicked.insert(changes[i].path);
    std::vector<RejectionState> out;
    for (const auto& s : states)
        if (!unpicked.count(s.rec.path)) out.push_back(s);
    return out;
}

}  // namespace review
