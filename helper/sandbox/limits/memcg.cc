#include "helper/sandbox/limits/memcg.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

#include "helper/base/fd.h"
#include "helper/sandbox/limits/limits.h"

namespace memcg {

namespace {

std::string read_text(const std::string& path) {
    auto fd = base::open_at(AT_FDCWD, path, O_RDONLY);
    if (!fd) return "";
    auto text = base::read_all(fd->get(), 1 << 20);
    return text ? text.value() : "";
}

base::Result<void> write_text(const std::string& path, const std::string& text) {
    TRY(base::Fd fd, base::open_at(AT_FDCWD, path, O_WRONLY));
    if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
        return base::sys_error("writing '" + text + "' to " + path);
    return base::Ok();
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] == '\\' && i + 3 < s.size()) {
            int v = 0;
            bool ok = true;
            for (size_t k = 1; k <= 3; k++) {
                if (s[i + k] < '0' || s[i + k] > '7') ok = false;
                else v = v * 8 + (s[i + k] - '0');
            }
            if (ok) {
                out.push_back(static_cast<char>(v));
                i += 3;
                continue;
            }
        }
        out.push_back(s[i]);
    }
    return out;
}

}  // namespace

std::string v2_dir(const std::string& proc_self_cgroup, const std::string& mountinfo) {
    std::string path;
    std::istringstream cg(proc_self_cgroup);
    for (std::string line; std::getline(cg, line);)
        if (line.rfind("0::/", 0) == 0) path = line.substr(3);
    if (path.empty() || path.find("/..") != std::string::npos) return "";
    std::istringstream mi(mountinfo);
    for (std::string line; std::getline(mi, line);) {
        size_t dash = line.find(" - ");
        if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
        std::istringstream f(line.substr(0, dash));
        std::string id, parent, devno, root, point;
        if (!(f >> id >> parent >> devno >> root >> point) || root != "/") continue;
        point = unescape(point);
        return path == "/" ? point : (point == "/" ? "" : point) + path;
    }
    return "";
}

bool lists_word(const std::string& text, const std::string& name) {
    std::istringstream in(text);
    for (std::string w; in >> w;)
        if (w == name) return true;
    return false;
}

bool lists_only(const std::string& procs, long pid) {
    std::istringstream in(procs);
    std::string w;
    if (!(in >> w) || w != std::to_string(pid)) return false;
    return !(in >> w);
}

std::string why_not(const Probe& p) {
    if (p.dir.empty()) return "this system has no cgroup v2 hierarchy";
    if (!p.memory) return "the memory controller is not available to your cgroup v2 (" + p.dir + ")";
    if (!p.writable) return "your cgroup (" + p.dir + ") is not delegated to you";
    if (!p.only_us)
        return "other processes share your cgroup (" + p.dir +
               "); run layover alone in a delegated one: systemd-run --user --scope -p Delegate=yes layover run ...";
    return "";
}

Probe probe() {
    Probe p;
    p.dir = v2_dir(read_text("/proc/self/cgroup"), read_text("/proc/self/mountinfo"));
    if (p.dir.empty()) return p;
    p.memory = lists_word(read_text(p.dir + "/cgroup.controllers"), "memory");
    p.writable = ::access(p.dir.c_str(), W_OK) == 0 && ::access((p.dir + "/cgroup.procs").c_str(), W_OK) == 0 &&
                 ::access((p.dir + "/cgroup.subtree_control").c_str(), W_OK) == 0;
    p.only_us = lists_only(read_text(p.dir + "/cgroup.procs"), static_cast<long>(::getpid()));
    return p;
}

Scope Scope::for_limit(uint64_t bytes, std::vector<std::string>* notices) {
    Scope s;
    if (!bytes) return s;
    std::string what = "--max-memory " + limits::format_bytes(bytes);
    Probe p = probe();
    std::string why = why_not(p);
    if (why.empty()) {
        auto made = s.create(p.dir, bytes);
        if (made) {
            notices->push_back(what + " caps the whole sandbox (cgroup v2 " + s.sandbox_ + ")");
            return s;
        }
        why = made.error().message;
    }
    notices->push_back(what + " applies per process (RLIMIT_AS), not to the sandbox as a whole: " + why);
    return s;
}

Scope& Scope::operator=(Scope&& o) noexcept {
    if (this != &o) {
        remove();
        parent_ = std::move(o.parent_);
        supervisor_ = std::move(o.supervisor_);
        sandbox_ = std::move(o.sandbox_);
        enabled_here_ = o.enabled_here_;
        o.parent_.clear();
        o.supervisor_.clear();
        o.sandbox_.clear();
    }
    return *this;
}

base::Result<void> Scope::create(const std::string& dir, uint64_t bytes) {
    parent_ = dir;
    std::string base = dir + "/layover-" + std::to_string(::getpid());
    if (::mkdir(base.c_str(), 0755) != 0) return base::sys_error("making cgroup " + base);
    supervisor_ = base;
    if (::mkdir((base + "-sandbox").c_str(), 0755) != 0) {
        auto e = base::sys_error("making cgroup " + base + "-sandbox");
        remove();
        return e;
    }
    sandbox_ = base + "-sandbox";
    auto steps = [&]() -> base::Result<void> {
        TRY_VOID(write_text(supervisor_ + "/cgroup.procs", "0"));
        if (!lists_word(read_text(parent_ + "/cgroup.subtree_control"), "memory")) {
            TRY_VOID(write_text(parent_ + "/cgroup.subtree_control", "+memory"));
            enabled_here_ = true;
        }
        TRY_VOID(write_text(sandbox_ + "/memory.max", std::to_string(bytes)));
        (void)write_text(sandbox_ + "/memory.swap.max", "0");  // absent without swap accounting
        return base::Ok();
    };
    auto r = steps();
    if (!r) remove();
    return r;
}

void Scope::remove() {
    if (!sandbox_.empty()) {
        // Every process of the sandbox has been reaped by now; the cgroup may
        // still count one for a moment.
        for (int i = 0; i < 100 && ::rmdir(sandbox_.c_str()) != 0 && errno == EBUSY; i++) {
            struct timespec ts = {0, 20 * 1000000};
            ::nanosleep(&ts, nullptr);
        }
        sandbox_.clear();
    }
    if (enabled_here_) (void)write_text(parent_ + "/cgroup.subtree_control", "-memory");
    enabled_here_ = false;
    if (!supervisor_.empty()) {
        (void)write_text(parent_ + "/cgroup.procs", "0");
        ::rmdir(supervisor_.c_str());
        supervisor_.clear();
    }
}

base::Result<void> enter(const std::string& sandbox_dir) {
    if (sandbox_dir.empty()) return base::Ok();
    auto r = write_text(sandbox_dir + "/cgroup.procs", "0");
    if (!r) return r.error().context("--max-memory");
    return base::Ok();
}

}  // namespace memcg
