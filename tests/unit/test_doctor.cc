// doctor's diagnosis: each environment fault simulated in doctor::Probes,
// and the finding it must produce (the failing line and its fix).
#include <catch2/catch.hpp>

#include "helper/cli/doctor/doctor.h"

namespace {

// A system where everything works.
doctor::Probes healthy() {
    doctor::Probes p;
    p.userns_clone = "1";
    p.max_user_ns = "63000";
    p.apparmor_restrict = "";
    p.osrelease = "6.1.0-18-amd64";
    p.self_path = "/usr/local/bin/layover";
    p.userns_ok = p.state_ok = p.xattr_ok = p.overlay_ok = p.proc_ok = p.sys_ok = p.seccomp_ok = p.notify_ok = true;
    p.state_dir = "/var/tmp/layover-1000";
    p.landlock_abi = 6;
    p.target_ok = p.target_owned = true;
    p.target = "/home/u";
    return p;
}

const doctor::Finding* find(const std::vector<doctor::Finding>& fs, const std::string& what_prefix) {
    for (const auto& f : fs)
        if (f.what.rfind(what_prefix, 0) == 0) return &f;
    return nullptr;
}

int fails(const std::vector<doctor::Finding>& fs) {
    int n = 0;
    for (const auto& f : fs) n += f.level == doctor::Level::Fail;
    return n;
}

// The one failure the fault causes, with the fix text it must hold.
void expect_fail(const doctor::Probes& p, const std::string& what, const std::string& fix_part) {
    auto fs = doctor::diagnose(p);
    const auto* f = find(fs, what);
    REQUIRE(f != nullptr);
    CHECK(f->level == doctor::Level::Fail);
    INFO(f->fix);
    CHECK(f->fix.find(fix_part) != std::string::npos);
}

}  // namespace

TEST_CASE("doctor: a healthy system has no failure", "[doctor]") {
    auto fs = doctor::diagnose(healthy());
    CHECK(fails(fs) == 0);
    CHECK(find(fs, "unprivileged user namespaces enabled")->level == doctor::Level::Ok);
    CHECK(find(fs, "Linux 6.1.0-18-amd64 is 5.11 or newer")->level == doctor::Level::Ok);
    CHECK(find(fs, "Landlock ABI 6")->level == doctor::Level::Ok);
}

TEST_CASE("doctor: userns disabled, per distribution", "[doctor]") {
    auto p = healthy();
    p.userns_clone = "0";
    p.userns_ok = false;
    expect_fail(p, "unprivileged user namespaces enabled", "sudo sysctl -w kernel.unprivileged_userns_clone=1");
    expect_fail(p, "unprivileged user namespaces enabled", "/etc/sysctl.d/");
    p = healthy();
    p.max_user_ns = "0";
    p.userns_ok = false;
    expect_fail(p, "unprivileged user namespaces enabled", "sudo sysctl -w user.max_user_namespaces=15000");
    expect_fail(p, "a user namespace can be created", "unshare -r true");
}

TEST_CASE("doctor: Ubuntu's AppArmor restriction", "[doctor]") {
    auto p = healthy();
    p.apparmor_restrict = "1";
    p.userns_ok = false;
    p.apparmor_label = "unconfined";
    // No profile installed: install it, or lift the restriction.
    expect_fail(p, "AppArmor allows unprivileged user namespaces",
                "writes /etc/apparmor.d/usr.local.bin.layover), then sudo apparmor_parser -r "
                "/etc/apparmor.d/usr.local.bin.layover");
    expect_fail(p, "AppArmor allows", "kernel.apparmor_restrict_unprivileged_userns=0");
    // Installed but not loaded: the one command.
    p.profile_installed = true;
    expect_fail(p, "AppArmor allows", "not loaded: sudo apparmor_parser -r /etc/apparmor.d/usr.local.bin.layover");
    // Running under the profile: the restriction does not apply.
    p.apparmor_label = "usr.local.bin.layover (enforce)";
    p.userns_ok = true;
    auto fs = doctor::diagnose(p);
    CHECK(fails(fs) == 0);
    CHECK(find(fs, "AppArmor restricts user namespaces; layover runs under its profile") != nullptr);
}

TEST_CASE("doctor: inside Docker or podman", "[doctor]") {
    auto p = healthy();
    p.container = "docker";
    p.userns_ok = false;
    expect_fail(p, "a user namespace can be created", "--security-opt seccomp=unconfined");
    expect_fail(p, "a user namespace can be created", "systempaths=unconfined");
    p.container = "podman";
    expect_fail(p, "a user namespace can be created", "unmask=ALL");
    p.userns_ok = true;
    auto fs = doctor::diagnose(p);
    CHECK(fails(fs) == 0);
    CHECK(find(fs, "running inside podman")->level == doctor::Level::Info);
    p.proc_ok = false;
    expect_fail(p, "a fresh /proc can be mounted", "unmask=ALL");
    p.proc_ok = true;
    p.sys_ok = false;
    expect_fail(p, "a fresh /sys can be mounted (the default network's own)", "--network host");
}

TEST_CASE("doctor: kernel older than 5.11", "[doctor]") {
    auto p = healthy();
    p.osrelease = "5.10.0-28-amd64";
    expect_fail(p, "Linux 5.10.0-28-amd64 is 5.11 or newer", "needs Linux 5.11+");
    p.osrelease = "4.19.0";
    expect_fail(p, "Linux 4.19.0", "upgrade the kernel");
    CHECK(doctor::kernel_version("5.11.0") == std::pair<int, int>{5, 11});
    CHECK(doctor::kernel_version("garbage") == std::pair<int, int>{0, 0});
    p.osrelease = "";
    CHECK(find(doctor::diagnose(p), "Linux ") == nullptr);
}

TEST_CASE("doctor: state dir without user xattrs, or on NFS", "[doctor]") {
    auto p = healthy();
    p.xattr_ok = false;
    p.overlay_ok = false;
    expect_fail(p, "state dir supports user.* xattrs", "set LAYOVER_STATE_DIR");
    p = healthy();
    p.state_nfs = true;
    expect_fail(p, "state dir is on a local filesystem", "is on NFS");
    p = healthy();
    p.state_ok = false;
    p.state_error = "state dir /x is a symlink";
    expect_fail(p, "state dir usable", "is a symlink");
}

TEST_CASE("doctor: submounts and foreign entries under the target", "[doctor]") {
    auto p = healthy();
    p.submounts = {"/home/u/mnt"};
    expect_fail(p, "no other filesystems mounted below the target", "pick a --target");
    CHECK(find(doctor::diagnose(p), "no other filesystems")->details ==
          std::vector<std::string>{"mounted below the target: /home/u/mnt"});
    p = healthy();
    p.foreign = {"uid 0): /home/u/f"};
    p.foreign_count = 25;
    expect_fail(p, "every entry under the target is yours", "25 entries");
    auto d = find(doctor::diagnose(p), "every entry")->details;
    CHECK(d == std::vector<std::string>{"not yours (uid 0): /home/u/f", "... and 24 more"});
    // One is "1 entry" (it said "1 entries"), and the line names a fix, as every FAIL does.
    p.foreign_count = 1;
    expect_fail(p, "every entry under the target is yours", "1 entry listed above cannot be modified");
    expect_fail(p, "every entry under the target is yours", "make them yours (sudo chown -R \"$USER:\" PATH)");
    p = healthy();
    p.target_ok = false;
    p.target = "/nope";
    p.target_error = "no such directory";
    expect_fail(p, "target /nope", "no such directory");
}

TEST_CASE("doctor: no seccomp, no Landlock", "[doctor]") {
    auto p = healthy();
    p.seccomp_ok = false;
    expect_fail(p, "seccomp filters load", "CONFIG_SECCOMP_FILTER");
    p = healthy();
    p.landlock_abi = 0;
    p.notify_ok = false;
    auto fs = doctor::diagnose(p);
    CHECK(fails(fs) == 0);
    CHECK(find(fs, "Landlock ABI 0")->level == doctor::Level::Info);
    CHECK(find(fs, "no seccomp user notification")->level == doctor::Level::Info);
}

TEST_CASE("doctor: the AppArmor profile's name", "[doctor]") {
    CHECK(doctor::profile_name("/usr/bin/layover") == "usr.bin.layover");
    CHECK(doctor::profile_name("/opt/x/bin/layover") == "opt.x.bin.layover");
}
