// The diagnosis of doctor's probes: pure, one finding per requirement, each
// failure with the fix for this system (distribution, container, AppArmor).
#include <cstdio>

#include "helper/cli/doctor/doctor.h"

namespace doctor {

namespace {

Finding ok(const std::string& what) { return {Level::Ok, what, "", {}}; }
Finding fail(const std::string& what, const std::string& fix) { return {Level::Fail, what, fix, {}}; }
Finding info(const std::string& what, const std::string& note) { return {Level::Info, what, note, {}}; }
Finding check(bool good, const std::string& what, const std::string& fix) { return good ? ok(what) : fail(what, fix); }

std::string container_fix(const std::string& c) {
    if (c == "docker")
        return "inside Docker, whose default seccomp profile blocks user namespaces: start the container with "
               "--security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt "
               "systempaths=unconfined, or run layover on the host";
    return "inside podman: start the container with --security-opt seccomp=unconfined --security-opt "
           "unmask=ALL (rootless podman also needs user namespaces on the host), or run layover on the host";
}

void userns_findings(const Probes& p, std::vector<Finding>& out) {
    std::string fix;
    if (p.userns_clone == "0")
        fix =
            "disabled by kernel.unprivileged_userns_clone=0 (Debian): sudo sysctl -w "
            "kernel.unprivileged_userns_clone=1, and to keep it: echo kernel.unprivileged_userns_clone=1 | "
            "sudo tee /etc/sysctl.d/50-layover.conf";
    else if (p.max_user_ns == "0")
        fix =
            "disabled by user.max_user_namespaces=0 (RHEL/CentOS): sudo sysctl -w user.max_user_namespaces=15000, "
            "and to keep it: echo user.max_user_namespaces=15000 | sudo tee /etc/sysctl.d/50-layover.conf";
    out.push_back(check(fix.empty(), "unprivileged user namespaces enabled", fix));

    std::string profile = "/etc/apparmor.d/" + profile_name(p.self_path);
    bool confined = !p.apparmor_label.empty() && p.apparmor_label.rfind("unconfined", 0) != 0;
    if (p.apparmor_restrict == "1" && confined) {
        out.push_back(
            ok("AppArmor restricts user namespaces; layover runs under its profile (" + p.apparmor_label + ")"));
    } else {
        std::string aa_fix = p.profile_installed
                                 ? "the profile is installed but not loaded: sudo apparmor_parser -r " + profile
                                 : "install layover's profile (make install, or the .deb, writes " + profile +
                                       "), then sudo apparmor_parser -r " + profile +
                                       "; or lift the restriction for every program: sudo sysctl -w "
                                       "kernel.apparmor_restrict_unprivileged_userns=0";
        out.push_back(check(p.apparmor_restrict != "1", "AppArmor allows unprivileged user namespaces", aa_fix));
    }
    std::string ns_fix = "see the lines above; 'unshare -r true' must work";
    if (!p.container.empty()) ns_fix = container_fix(p.container);
    out.push_back(check(p.userns_ok, "a user namespace can be created", ns_fix));
    if (!p.container.empty() && p.userns_ok)
        out.push_back(info("running inside " + p.container, "user namespaces work here"));
}

void kernel_findings(const Probes& p, std::vector<Finding>& out) {
    auto [major, minor] = kernel_version(p.osrelease);
    if (major == 0) return;
    bool new_enough = major > 5 || (major == 5 && minor >= 11);
    out.push_back(check(new_enough, "Linux " + p.osrelease + " is 5.11 or newer",
                        "overlayfs in a user namespace needs Linux 5.11+; upgrade the kernel (Debian 12, Ubuntu "
                        "22.04, RHEL 9 and later have it)"));
}

void state_findings(const Probes& p, std::vector<Finding>& out) {
    out.push_back(
        check(p.state_ok, "state dir usable" + (p.state_ok ? " (" + p.state_dir + ")" : std::string()), p.state_error));
    if (!p.state_ok) return;
    if (p.state_nfs) {
        out.push_back(fail("state dir is on a local filesystem",
                           p.state_dir + " is on NFS, which overlayfs cannot use as an upper layer: set "
                                         "LAYOVER_STATE_DIR to a dir on a local ext4/xfs/btrfs"));
        return;
    }
    out.push_back(
        check(p.xattr_ok, "state dir supports user.* xattrs",
              "its filesystem lacks them (tmpfs before Linux 6.6?): set LAYOVER_STATE_DIR to a dir on ext4/xfs/btrfs"));
    out.push_back(check(p.overlay_ok, "overlayfs mounts with userxattr in a user namespace",
                        "needs Linux 5.11+ and user.* xattrs on the state dir's filesystem"));
}

void filter_findings(const Probes& p, std::vector<Finding>& out) {
    std::string proc_fix =
        "the host's /proc is partly hidden (as in some containers); run layover on the host or in a container "
        "started with an unmasked /proc (docker: --security-opt systempaths=unconfined; podman: --security-opt "
        "unmask=ALL)";
    out.push_back(check(p.proc_ok, "a fresh /proc can be mounted", proc_fix));
    out.push_back(check(p.sys_ok, "a fresh /sys can be mounted (the default network's own)",
                        "the host's /sys is partly covered (as in some containers): use --network host, or a "
                        "container started with an unmasked /sys (docker: --security-opt systempaths=unconfined; "
                        "podman: --security-opt unmask=ALL)"));
    out.push_back(
        check(p.seccomp_ok, "seccomp filters load (the command's syscall filter)",
              "the kernel lacks seccomp filtering (CONFIG_SECCOMP_FILTER) or SECCOMP_RET_KILL_PROCESS (Linux 4.14+)"));
    if (p.notify_ok)
        out.push_back(ok("seccomp user notification: renaming a directory that existed before the session works"));
    else
        out.push_back(info("no seccomp user notification (Linux 5.5+)",
                           "renaming a directory that existed before the session fails with EXDEV (coreutils mv "
                           "still works)"));
    if (p.landlock_abi >= 6)
        out.push_back(ok("Landlock ABI " + std::to_string(p.landlock_abi) +
                         ": abstract unix sockets of the host are closed with --network host"));
    else
        out.push_back(info("Landlock ABI " + std::to_string(p.landlock_abi) + " (6 needed, Linux 6.12+)",
                           "with --network host the host's abstract unix sockets stay reachable"));
}

void target_findings(const Probes& p, std::vector<Finding>& out) {
    if (!p.target_ok) {
        out.push_back(fail("target " + p.target, p.target_error));
        return;
    }
    out.push_back(
        check(p.target_owned, "target " + p.target + " exists and is yours",
              "files not owned by you cannot be changed inside (copy-up fails with EOVERFLOW); pick a target you own"));
    Finding subs =
        check(p.submounts.empty(), "no other filesystems mounted below the target",
              "the kernel refuses an unprivileged overlay over host mounts; pick a --target with none below it");
    for (const auto& m : p.submounts) subs.details.push_back("mounted below the target: " + m);
    out.push_back(subs);
    Finding f = check(
        p.foreign_count == 0, "every entry under the target is yours",
        std::to_string(p.foreign_count) + (p.foreign_count == 1 ? " entry" : " entries") +
            " listed above cannot be modified inside the sandbox (EOVERFLOW on copy-up; reading works); to change them "
            "there, make them yours (sudo chown -R \"$USER:\" PATH), or pick a --target without them");
    for (const auto& e : p.foreign) f.details.push_back("not yours (" + e);
    if (p.foreign_count > static_cast<int>(p.foreign.size()))
        f.details.push_back("... and " + std::to_string(p.foreign_count - p.foreign.size()) + " more");
    out.push_back(f);
}

}  // namespace

std::string profile_name(const std::string& bin) {
    std::string n = bin;
    while (!n.empty() && n[0] == '/') n.erase(0, 1);
    for (char& c : n)
        if (c == '/') c = '.';
    return n.empty() ? "layover" : n;
}

std::pair<int, int> kernel_version(const std::string& osrelease) {
    int major = 0, minor = 0;
    if (std::sscanf(osrelease.c_str(), "%d.%d", &major, &minor) != 2) return {0, 0};
    return {major, minor};
}

std::vector<Finding> diagnose(const Probes& p) {
    std::vector<Finding> out;
    userns_findings(p, out);
    kernel_findings(p, out);
    state_findings(p, out);
    filter_findings(p, out);
    target_findings(p, out);
    return out;
}

}  // namespace doctor
