#include "helper/sandbox/policy/scratch.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "helper/base/clock.h"
#include "helper/base/text.h"
#include "helper/sandbox/policy/first_run.h"
#include "helper/store/records/owner_ns.h"
#include "overlay/mountinfo.h"

namespace scratch {

std::vector<std::string> choose_roots(const std::vector<std::string>& candidates, const std::string& target,
                                      const std::string& state, std::vector<std::string>* why_not) {
    std::vector<std::string> roots;
    for (const auto& c : candidates) {
        if (c.empty() || c == "/" || overlay::path_within(c, target) || first_run::replaced_inside(c)) continue;
        if (overlay::path_within(state, c) || overlay::path_within(c, state)) {
            why_not->push_back(base::display_path(c) + " stays read-only: the state dir " + base::display_path(state) +
                               " lies in it");
            continue;
        }
        bool inside_other = false;
        for (const auto& o : candidates)
            if (o != c && !o.empty() && overlay::path_within(c, o) && !overlay::path_within(o, target))
                inside_other = true;
        if (inside_other || std::find(roots.begin(), roots.end(), c) != roots.end()) continue;
        roots.push_back(c);
    }
    return roots;
}

std::string layer_dir(const std::string& session_dir, size_t i) {
    return session_dir + "/outside/" + std::to_string(i);
}

std::string group_of(const std::string& display_root, const std::string& rel) {
    size_t a = rel.find('/');
    std::string first = rel.substr(0, a);
    std::string key = first;
    // The shared dot-dirs group one level deeper: ~/.cache/pip, ~/.config/git.
    if ((first == ".cache" || first == ".config" || first == ".local") && a != std::string::npos) {
        size_t b = rel.find('/', a + 1);
        key = rel.substr(0, b);
        if (key == ".local/share" && b != std::string::npos) key = rel.substr(0, rel.find('/', b + 1));
    }
    return display_root == "/" ? "/" + key : display_root + "/" + key;
}

namespace {

struct Found {
    std::string path;
    bool whiteout = false;
    int64_t ctime_ns = 0;
};

void walk(int dirfd, const std::string& rel, std::vector<Found>* out) {
    DIR* d = ::fdopendir(dirfd);
    if (!d) {
        ::close(dirfd);
        return;
    }
    while (struct dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n == "." || n == "..") continue;
        struct stat st;
        if (::fstatat(::dirfd(d), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        std::string p = rel.empty() ? n : rel + "/" + n;
        if (S_ISDIR(st.st_mode)) {
            int sub = ::openat(::dirfd(d), n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) walk(sub, p, out);
            continue;
        }
        bool whiteout = S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0);
        out->push_back({p, whiteout, base::time_ns(st.st_ctim.tv_sec, st.st_ctim.tv_nsec)});
    }
    ::closedir(d);
}

std::string display_root(const std::string& root, const std::string& home) {
    if (!home.empty() && root == home) return "~";
    if (!home.empty() && overlay::path_within(root, home)) return "~" + root.substr(home.size());
    return root;
}

}  // namespace

base::Result<Summary> summarize(const std::string& session_dir, const std::vector<std::string>& roots,
                                const std::string& home, int64_t since_ns) {
    Summary s;
    if (roots.empty()) return s;
    // One walk per root, in the owner namespace (mode-000 dirs stay readable);
    // the result comes back as lines: "F<path>" or "D<path>" (deleted),
    // "f"/"d" for an earlier run's.
    TRY(std::string text, capture::in_owner_ns([&]() -> base::Result<std::string> {
            std::string lines;
            for (size_t i = 0; i < roots.size(); i++) {
                int fd = ::open((layer_dir(session_dir, i) + "/upper").c_str(),
                                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0) continue;
                std::vector<Found> found;
                walk(fd, "", &found);
                for (const auto& f : found) {
                    bool old = since_ns > 0 && f.ctime_ns < since_ns;
                    lines += std::to_string(i) + (f.whiteout ? (old ? "d" : "D") : (old ? "f" : "F")) + f.path + '\0';
                }
            }
            return lines;
        }));
    std::map<std::string, uint64_t> groups;
    std::map<std::string, bool> deeper;  // a group with an entry below it: a dir, not one file
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\0', pos);
        std::string line = text.substr(pos, end - pos);
        pos = end + 1;
        size_t k = line.find_first_of("DFdf");
        size_t i = std::stoul(line.substr(0, k));
        bool deleted = line[k] == 'D' || line[k] == 'd';
        if (line[k] == 'd' || line[k] == 'f') s.earlier++;
        std::string rel = line.substr(k + 1);
        std::string root = display_root(roots[i], home);
        s.files++;
        // The names are the command's: escaped for display.
        std::string g = group_of(root, rel);
        groups[base::display_path(g)]++;
        deeper[base::display_path(g)] |= g != (root == "/" ? "/" + rel : root + "/" + rel);
        s.paths.push_back(std::string(deleted ? "deleted " : "") + base::display_path(root + "/" + rel));
    }
    std::vector<std::pair<std::string, uint64_t>> order(groups.begin(), groups.end());
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [g, n] : order) {
        s.under.push_back(g);
        s.counts.push_back(n);
        s.is_file.push_back(!deeper[g]);
    }
    std::sort(s.paths.begin(), s.paths.end());
    return s;
}

std::string summary_line(const Summary& s) {
    if (s.files == 0) return "";
    std::string n = std::to_string(s.files);
    for (int i = static_cast<int>(n.size()) - 3; i > 0; i -= 3) n.insert(static_cast<size_t>(i), ",");
    bool any_file = false;
    for (size_t i = 0; i < s.is_file.size(); i++) any_file = any_file || s.is_file[i];
    if (s.is_file.size() != s.under.size()) any_file = false;  // made by hand without them
    std::string line =
        "outside the target (not applied): " + n + (s.files == 1 ? " file" : " files") + (any_file ? ": " : " under ");
    for (size_t i = 0; i < s.under.size() && i < 3; i++) {
        line += i ? ", " : "";
        // Mixed with single files, each dir says how many of them it holds.
        if (any_file && i < s.counts.size() && !s.is_file[i]) line += base::thousands(s.counts[i]) + " under ";
        line += s.under[i];
    }
    if (s.under.size() > 3) line += ", …";
    if (s.earlier == s.files) line += " (from earlier runs)";
    else if (s.earlier) line += " (" + std::to_string(s.earlier) + " of them from earlier runs)";
    return line;
}

}  // namespace scratch
