// --max-memory over the whole sandbox: a cgroup v2 memory limit where the
// caller has delegated its cgroup to layover (e.g. `systemd-run --user
// --scope -p Delegate=yes layover run ...`); anywhere else the child sets
// RLIMIT_AS per process (helper/sandbox/limits/limits.cc) and run says so.
// The cgroup path is unit-tested in its pure parts only: the hosts we test
// on have the memory controller on cgroup v1 (docs/design.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "helper/base/result.h"

namespace memcg {

// The caller's cgroup v2 directory, from /proc/self/cgroup ("0::/PATH") and
// /proc/self/mountinfo (a cgroup2 mount of the hierarchy's root); "" if none.
std::string v2_dir(const std::string& proc_self_cgroup, const std::string& mountinfo);
// cgroup.controllers / cgroup.subtree_control text lists `name`.
bool lists_word(const std::string& text, const std::string& name);
// cgroup.procs text lists `pid` and nothing else.
bool lists_only(const std::string& procs, long pid);

struct Probe {
    std::string dir;        // our cgroup v2 directory; empty: none
    bool memory = false;    // "memory" in dir/cgroup.controllers
    bool writable = false;  // we may make cgroups there and move processes
    bool only_us = false;   // dir/cgroup.procs lists this process alone
};
// "" when the sandbox can have a cgroup of its own; else why not (one clause).
std::string why_not(const Probe& p);
Probe probe();

// The cgroups of one run, removed again by the destructor:
//   DIR/layover-PID          the supervisor moves itself here: DIR may enable
//                            the memory controller for its children only
//                            once it holds no process itself;
//   DIR/layover-PID-sandbox  memory.max (and memory.swap.max 0), which setup
//                            enters before it forks anything.
class Scope {
public:
    Scope() = default;
    // For --max-memory BYTES (0: none, no notice): a scope, or an empty one
    // when RLIMIT_AS must do; either way one notice line says which.
    static Scope for_limit(uint64_t bytes, std::vector<std::string>* notices);
    Scope(Scope&& o) noexcept { *this = std::move(o); }
    Scope& operator=(Scope&& o) noexcept;
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() { remove(); }
    const std::string& sandbox_dir() const { return sandbox_; }

private:
    base::Result<void> create(const std::string& dir, uint64_t bytes);
    void remove();
    std::string parent_, supervisor_, sandbox_;
    bool enabled_here_ = false;  // we added memory to parent's subtree_control
};

// In setup, before it starts anything: move this process into the sandbox's
// cgroup (a no-op for an empty dir).
base::Result<void> enter(const std::string& sandbox_dir);

}  // namespace memcg
