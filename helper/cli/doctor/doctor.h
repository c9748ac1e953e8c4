// `layover doctor`: probes of the real system (doctor_probes.cc) filled into
// one struct, and a pure diagnosis of that struct (doctor_report.cc), so that
// each check is a unit test with its fault simulated.
#pragma once
#include <string>
#include <vector>

namespace doctor {

struct Probes {
    // Sysctls as read from PROBE_ROOT/proc/sys ("" when absent).
    std::string userns_clone;        // kernel.unprivileged_userns_clone (Debian)
    std::string max_user_ns;         // user.max_user_namespaces (RHEL and all)
    std::string apparmor_restrict;   // kernel.apparmor_restrict_unprivileged_userns (Ubuntu 23.10+)
    std::string osrelease;           // kernel.osrelease
    std::string apparmor_label;      // our AppArmor label ("" or "unconfined" when none)
    std::string self_path;           // this binary (for the profile's name)
    bool profile_installed = false;  // /etc/apparmor.d/<profile name> exists
    std::string container;           // "docker", "podman" or "" (not detected)
    bool userns_ok = false;          // a user namespace could be created
    bool state_ok = false;
    std::string state_dir, state_error;
    bool xattr_ok = false;   // user.* xattrs on the state dir
    bool state_nfs = false;  // the state dir is on NFS
    bool overlay_ok = false;
    bool proc_ok = false;
    bool sys_ok = false;  // a sysfs of an own network namespace (default --network)
    bool seccomp_ok = false;
    bool notify_ok = false;
    int landlock_abi = 0;
    // The target: resolved path or the error; ownership, submounts, foreign entries.
    bool target_ok = false;
    std::string target, target_error;
    bool target_owned = false;
    std::vector<std::string> submounts;
    std::vector<std::string> foreign;  // "uid N): /target/path", at most 20
    int foreign_count = 0;
};

enum class Level { Ok, Fail, Info };

struct Finding {
    Level level;
    std::string what;
    std::string fix;                   // for Fail: the fix; for Info: the consequence
    std::vector<std::string> details;  // lines printed below
};

// The root every file-based probe reads under: "/" unless the test-only
// LAYOVER_TEST_DOCTOR_ROOT names a fake one (proc/sys/..., .dockerenv, ...).
std::string probe_root();
Probes probe_system(const std::string& target);
std::vector<Finding> diagnose(const Probes& p);
// The AppArmor profile's name for a binary path: /usr/bin/layover -> usr.bin.layover.
std::string profile_name(const std::string& bin);
// "5.10.0-21-amd64" -> {5, 10}; {0, 0} when unreadable.
std::pair<int, int> kernel_version(const std::string& osrelease);
// Session histories (doctor_history.cc): prints a line per leftover of a
// killed step operation (with `fix`, repairs it); returns the FAIL count.
int check_histories(bool fix);
// An apply or undo killed on `target` (its journal left): FAIL, or with
// `fix` its recovery (review/apply/recover_pending.h). The FAILs.
int check_apply_journal(const std::string& target, bool fix);

}  // namespace doctor
