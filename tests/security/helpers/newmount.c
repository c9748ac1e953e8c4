/* Tries to change the sandbox's mounts by every API; prints one line per try:
 * "NAME ok" or "NAME errno=N". Built by tests/security/test_seccomp.py.
 *
 * First it tries to enter a nested user and mount namespace ("nested"), as an
 * attacker would to get CAP_SYS_ADMIN over a copy of the sandbox's mounts. The
 * seccomp filter refuses that; without it (LAYOVER_TEST_NO_SECCOMP=1) the
 * tries below run with full capabilities over the copy, where the kernel must
 * refuse them because the copied mounts are locked.
 *
 * "lock:" tries would uncover or unlock what the sandbox mounted (the real
 * target under its overlay, a hidden path, a read-only or nosuid flag): they
 * must fail everywhere. "step:" lines are the harmless calls that lead to one
 * (an O_PATH fd of the target, say). "api:" tries use the new mount API with
 * arguments the kernel refuses only after its capability check (a bad fd), so
 * their errno shows who refused them. "cover:" tries mount something new over
 * the target: refused in the sandbox's own namespace, allowed by the kernel in
 * a nested one, where it is private to that namespace. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

static void say(const char *what, const char *arg, long rc) {
    printf("%s%s %s", what, arg ? arg : "", rc < 0 ? "errno=" : "ok\n");
    if (rc < 0) printf("%d\n", errno);
    fflush(stdout);
}

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY);
    if (fd < 0) return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* A user namespace of our own, mapping us to root, and a copy of the mounts. */
static long enter_nested(void) {
    char map[64];
    unsigned uid = getuid(), gid = getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return -1;
    snprintf(map, sizeof map, "0 %u 1", uid);
    if (write_file("/proc/self/setgroups", "deny") || write_file("/proc/self/uid_map", map)) return -1;
    snprintf(map, sizeof map, "0 %u 1", gid);
    return write_file("/proc/self/gid_map", map);
}

/* umount2 every mount point but /, from mountinfo (no spaces: octal escapes). */
static void umount_each(void) {
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[4096], mp[4096];
    if (!f) return;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 && strcmp(mp, "/") != 0 && !strchr(mp, '\\'))
            say("lock:umount:", mp, umount2(mp, MNT_DETACH));
    fclose(f);
}

static long setattr(const char *path, unsigned flags, unsigned long long set, unsigned long long clr) {
    struct mount_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.attr_set = set;
    attr.attr_clr = clr;
    return syscall(SYS_mount_setattr, AT_FDCWD, path, flags, &attr, sizeof attr);
}

int main(int argc, char **argv) {
    const char *target = argc > 1 ? argv[1] : "/";
    say("nested", NULL, enter_nested());

    umount_each();
    say("lock:remount_rw_root", NULL, mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL));
    say("lock:remount_suid_target", NULL, mount(NULL, target, NULL, MS_REMOUNT | MS_BIND, NULL));
    say("lock:bind_root_over_target", NULL, mount("/", target, NULL, MS_BIND, NULL));
    say("lock:open_tree_clone_root", NULL, syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE));
    long t = syscall(SYS_open_tree, AT_FDCWD, target, 0);
    say("step:open_tree_target", NULL, t);
    if (t >= 0)
        say("lock:move_mount_target_away", NULL,
            syscall(SYS_move_mount, t, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH));
    say("lock:mount_setattr_root_rw", NULL, setattr("/", AT_RECURSIVE, 0, MOUNT_ATTR_RDONLY));
    say("lock:mount_setattr_target_suid", NULL, setattr(target, 0, 0, MOUNT_ATTR_NOSUID));
    long p = syscall(SYS_fspick, AT_FDCWD, "/", 0);
    say("step:fspick_root", NULL, p);
    if (p >= 0) {
        say("step:fsconfig_root_rw", NULL, syscall(SYS_fsconfig, p, FSCONFIG_SET_FLAG, "rw", NULL, 0));
        say("lock:reconfigure_root", NULL, syscall(SYS_fsconfig, p, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0));
    }

    say("api:fsmount", NULL, syscall(SYS_fsmount, -1, 0, 0));
    say("api:move_mount", NULL, syscall(SYS_move_mount, -1, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH));
    say("api:fsconfig", NULL, syscall(SYS_fsconfig, -1, FSCONFIG_CMD_CREATE, NULL, NULL, 0));

    long fs = syscall(SYS_fsopen, "tmpfs", 0);
    say("cover:fsopen", NULL, fs);
    if (fs >= 0) {
        say("cover:fsconfig_create", NULL, syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0));
        long m = syscall(SYS_fsmount, fs, 0, 0);
        say("cover:fsmount", NULL, m);
        if (m >= 0)
            say("cover:move_mount_new", NULL,
                syscall(SYS_move_mount, m, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH));
    }
    long c = syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | AT_RECURSIVE);
    say("cover:open_tree_clone_all", NULL, c);
    if (c >= 0)
        say("cover:move_mount_clone", NULL, syscall(SYS_move_mount, c, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH));
    return 0;
}
