#include "helper/store/history/revert.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "helper/base/fd.h"
#include "helper/store/layers/layer_build.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/layers.h"

namespace steps {

namespace {

bool whole(const std::string& kind) { return kind == "A" || kind == "D" || kind == "T"; }

std::vector<std::string> split(const std::string& path) {
    std::vector<std::string> out;
    for (size_t a = 0; a <= path.size();) {
        size_t b = path.find('/', a);
        if (b == std::string::npos) b = path.size();
        out.push_back(path.substr(a, b - a));
        a = b + 1;
    }
    return out;
}

base::Result<base::Fd> open_dir(int dirfd, const std::string& name) {
    return base::open_at(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

// Steps top..1 over the target.
base::Result<layers::Chain> view_chain(const std::string& d, int top, const std::string& target) {
    layers::Chain c;
    TRY(int first, first_layer(d));  // below it: squashed steps, no layers
    for (int i = top; i >= first; i--) {
        TRY(base::Fd l, open_layer(d, i));
        c.fds.push_back(std::move(l));
    }
    TRY(base::Fd t, open_dir(AT_FDCWD, target));
    c.fds.push_back(std::move(t));
    c.bottom_is_target = true;
    return c;
}

// The live upper holds an entry at `path` (any type, a whiteout too).
bool live_holds(int upper, const std::vector<std::string>& parts) {
    base::Fd cur;
    int at = upper;
    for (size_t i = 0; i + 1 < parts.size(); i++) {
        int fd = ::openat(at, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) return false;
        cur.reset(fd);
        at = fd;
    }
    struct stat st;
    return ::fstatat(at, parts.back().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

void add(std::vector<Clash>* out, const std::string& path, int by) {
    for (auto& c : *out)
        if (c.path == path) {
            if (std::find(c.by.begin(), c.by.end(), by) == c.by.end()) c.by.push_back(by);
            return;
        }
    out->push_back({path, {by}});
}

}  // namespace

void find_clashes(const std::vector<Touched>& mine, const std::vector<Touched>& theirs, int by,
                  std::vector<Clash>* out) {
    std::map<std::string, std::string> kinds;
    for (const auto& t : mine) kinds.emplace(t.path, t.kind);
    for (const auto& q : theirs) {
        if (kinds.count(q.path)) add(out, q.path, by);
        // q under a dir of mine added, deleted or replaced.
        for (size_t s = q.path.rfind('/'); s != std::string::npos && s > 0; s = q.path.rfind('/', s - 1)) {
            auto it = kinds.find(q.path.substr(0, s));
            if (it != kinds.end() && whole(it->second)) add(out, it->first, by);
            if (s == 0) break;
        }
        // Mine under a dir q added, deleted or replaced.
        if (!whole(q.kind)) continue;
        std::string prefix = q.path + "/";
        for (auto it = kinds.lower_bound(prefix); it != kinds.end() && it->first.rfind(prefix, 0) == 0; ++it)
            add(out, it->first, by);
    }
}

base::Result<std::vector<Clash>> revert_clashes(const std::string& d, int n, const std::string& target) {
    TRY(auto mine, touched(d, n, target));
    TRY(auto recs, read_all(d));
    std::vector<Clash> out;
    for (const auto& r : recs) {
        if (r.n <= n) continue;
        if (!r.missing && !r.pending) {
            find_clashes(mine, r.paths, r.n, &out);
            continue;
        }
        TRY(auto theirs, touched(d, r.n, target));
        find_clashes(mine, theirs, r.n, &out);
    }
    std::string upper = d + "/upper";
    TRY(auto live, touched_layer(upper, d, static_cast<int>(recs.size()), target));
    find_clashes(mine, live, 0, &out);
    TRY(base::Fd up, open_dir(AT_FDCWD, upper));
    for (const auto& t : mine)
        if (live_holds(up.get(), split(t.path))) add(&out, t.path, 0);
    std::sort(out.begin(), out.end(), [](const Clash& a, const Clash& b) { return a.path < b.path; });
    for (auto& c : out)
        std::sort(c.by.begin(), c.by.end(),
                  [](int a, int b) { return (a == 0 ? 1 << 30 : a) < (b == 0 ? 1 << 30 : b); });
    return out;
}

base::Result<std::vector<Touched>> build_inverse(const std::string& d, int n, const std::string& target,
                                                 const std::string& out) {
    TRY(int total, count(d));
    TRY(auto paths, touched(d, n, target));
    TRY(layers::Chain before_root, view_chain(d, n - 1, target));
    TRY(layers::Chain now_root, view_chain(d, total, target));
    if (::mkdir(out.c_str(), 0755) != 0) return base::sys_error("creating " + out);
    TRY(base::Fd root, open_dir(AT_FDCWD, out));
    struct Pending {
        base::Fd to, from;
        struct stat st;
    };
    std::vector<Pending> attrs;  // set once everything inside is made
    std::string skip;            // a dir handled whole: its inside is done
    for (const auto& t : paths) {
        if (!skip.empty() && t.path.rfind(skip + "/", 0) == 0) continue;
        auto parts = split(t.path);
        std::string leaf = parts.back();
        parts.pop_back();
        layers::Chain before, now;
        const layers::Chain *bc = &before_root, *nc = &now_root;
        base::Fd cur;
        int at = root.get();
        for (const auto& part : parts) {
            TRY(layers::Found b, layers::lookup(*bc, part));
            TRY(layers::Found w, layers::lookup(*nc, part));
            if (!b.exists || !w.exists || !S_ISDIR(b.st.st_mode) || !S_ISDIR(w.st.st_mode))
                return base::error("step " + std::to_string(n) + ": the dir above " + t.path +
                                   " is not a dir in the session's view");
            struct stat st;
            if (::fstatat(at, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
                if (::mkdirat(at, part.c_str(), 0700) != 0) return base::sys_error("creating dir " + part);
                TRY(base::Fd made, open_dir(at, part));
                TRY(base::Fd from, open_dir(w.sub.fds[0].get(), "."));
                TRY(base::Fd again, open_dir(made.get(), "."));
                attrs.push_back({std::move(again), std::move(from), w.st});
                cur = std::move(made);
            } else {
                TRY(base::Fd opened, open_dir(at, part));
                cur = std::move(opened);
            }
            at = cur.get();
            before = std::move(b.sub);
            now = std::move(w.sub);
            bc = &before;
            nc = &now;
        }
        if (whole(t.kind)) skip = t.path;
        if (t.kind == "A") {
            TRY_VOID(put_whiteout(at, leaf));
            continue;
        }
        TRY(layers::Found f, layers::lookup(*bc, leaf));
        if (!f.exists)
            return base::error("step " + std::to_string(n) + ": " + t.path + " is not in the view before it");
        if (t.kind == "mode" && S_ISDIR(f.st.st_mode)) {
            if (::mkdirat(at, leaf.c_str(), 0700) != 0) return base::sys_error("creating dir " + leaf);
            TRY(base::Fd made, open_dir(at, leaf));
            TRY(base::Fd from, open_dir(f.sub.fds[0].get(), "."));
            attrs.push_back({std::move(made), std::move(from), f.st});
            continue;
        }
        TRY_VOID(put_entry(*bc, f, leaf, at, true));
    }
    for (auto it = attrs.rbegin(); it != attrs.rend(); ++it) TRY_VOID(copy_attrs(it->from.get(), it->to.get(), it->st));
    return paths;
}

}  // namespace steps
