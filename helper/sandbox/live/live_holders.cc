#include "helper/sandbox/live/live_holders.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "helper/base/fd.h"
#include "helper/base/text.h"

namespace {

std::string read_file(const std::string& p, size_t max = 1 << 20) {
    auto fd = base::open_at(AT_FDCWD, p, O_RDONLY);
    if (!fd) return "";
    auto t = base::read_all(fd->get(), max);
    return t ? t.value() : "";
}

std::string link_of(const std::string& p) {
    char b[4096];
    ssize_t n = ::readlink(p.c_str(), b, sizeof b);
    return n > 0 ? std::string(b, static_cast<size_t>(n)) : "?";
}

std::vector<std::string> entries(const std::string& dir) {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return out;
    while (struct dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') out.push_back(e->d_name);
    ::closedir(d);
    return out;
}

// init's descendants, from each process's parent in /proc/PID/stat.
std::vector<pid_t> descendants(pid_t init) {
    std::multimap<pid_t, pid_t> kids;
    for (const auto& n : entries("/proc")) {
        if (n.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string st = read_file("/proc/" + n + "/stat", 4096);
        size_t close = st.rfind(')');
        if (close == std::string::npos || close + 4 >= st.size()) continue;
        pid_t ppid = static_cast<pid_t>(std::atol(st.c_str() + close + 4));  // ") S PPID"
        kids.emplace(ppid, static_cast<pid_t>(std::atol(n.c_str())));
    }
    std::vector<pid_t> out, todo = {init};
    while (!todo.empty()) {
        pid_t p = todo.back();
        todo.pop_back();
        auto [a, b] = kids.equal_range(p);
        for (auto it = a; it != b; ++it) {
            out.push_back(it->second);
            todo.push_back(it->second);
        }
    }
    return out;
}

// The ids of the overlay mounts on `target` in the process's namespace.
std::set<long> overlay_ids(pid_t pid, const std::string& target) {
    std::set<long> ids;
    std::istringstream in(read_file("/proc/" + std::to_string(pid) + "/mountinfo", 16 << 20));
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string id, parent, dev, root, point;
        f >> id >> parent >> dev >> root >> point;
        size_t dash = line.find(" - ");
        if (point == target && dash != std::string::npos && line.compare(dash + 3, 8, "overlay ") == 0)
            ids.insert(std::atol(id.c_str()));
    }
    return ids;
}

long mount_id(const std::string& p) {
    struct statx sx {};
    if (::statx(AT_FDCWD, p.c_str(), 0, STATX_MNT_ID, &sx) != 0) return -1;
    return static_cast<long>(sx.stx_mnt_id);
}

long field(const std::string& text, const char* key, int base_) {
    size_t at = text.find(key);
    return at == std::string::npos ? -1 : std::strtol(text.c_str() + at + std::string(key).size(), nullptr, base_);
}

}  // namespace

std::vector<Holder> find_holders(pid_t init, const std::string& target, bool writers) {
    std::vector<Holder> out;
    for (pid_t pid : descendants(init)) {
        std::string dir = "/proc/" + std::to_string(pid);
        auto ids = overlay_ids(pid, target);
        if (ids.empty()) continue;
        std::string comm = read_file(dir + "/comm", 256);
        while (!comm.empty() && comm.back() == '\n') comm.pop_back();
        auto add = [&](const std::string& what) { out.push_back({pid, comm, what}); };
        if (!writers && ids.count(mount_id(dir + "/cwd")))
            add("has its working directory in " + base::display_path(link_of(dir + "/cwd")));
        for (const auto& fd : entries(dir + "/fd")) {
            std::string info = read_file(dir + "/fdinfo/" + fd, 4096);
            if (!ids.count(field(info, "mnt_id:", 10))) continue;
            std::string path = base::display_path(link_of(dir + "/fd/" + fd));
            long flags = field(info, "flags:", 8);
            struct stat st;
            bool is_dir = ::stat((dir + "/fd/" + fd).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
            if (writers && flags >= 0 && (flags & O_ACCMODE) != O_RDONLY) add("has " + path + " open for writing");
            else if (!writers && is_dir) add("has the directory " + path + " open");
        }
        if (!writers) continue;
        std::istringstream maps(read_file(dir + "/maps", 16 << 20));
        std::string line;
        while (std::getline(maps, line)) {
            std::istringstream f(line);
            std::string range, perms, off, dev, ino, path;
            f >> range >> perms >> off >> dev >> ino;
            std::getline(f >> std::ws, path);
            if (perms.size() == 4 && perms[1] == 'w' && perms[3] == 's' && path.rfind(target + "/", 0) == 0)
                add("has " + base::display_path(path) + " mapped shared and writable");
        }
    }
    return out;
}

std::string describe_holders(const std::vector<Holder>& h) {
    std::string s;
    for (size_t i = 0; i < h.size() && i < 3; i++)
        s += (i ? "; " : "") + std::string("pid ") + std::to_string(h[i].pid) + " (" + base::display_path(h[i].comm) +
             ") " + h[i].what;
    if (h.size() > 3) s += "; and " + std::to_string(h.size() - 3) + " more";
    return s;
}
