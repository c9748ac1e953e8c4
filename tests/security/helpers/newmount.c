/* Tries to change the sandbox's mounts by every API; prints one line per try:
 * "NAME ok" or "NAME errno=N". Built by tests/security/test_seccomp.py. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

static void say(const char *what, long rc) {
    if (rc < 0) printf("%s errno=%d\n", what, errno);
    else printf("%s ok\n", what);
    fflush(stdout);
}

int main(int argc, char **argv) {
    const char *target = argc > 1 ? argv[1] : "/";
    say("umount", umount2(target, MNT_DETACH));
    say("remount_rw_root", mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL));
    say("bind_root_over_target", mount("/", target, NULL, MS_BIND, NULL));
    long fs = syscall(SYS_fsopen, "tmpfs", 0);
    say("fsopen", fs);
    if (fs >= 0) {
        say("fsconfig", syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0));
        long m = syscall(SYS_fsmount, fs, 0, 0);
        say("fsmount", m);
        if (m >= 0) say("move_mount_new", syscall(SYS_move_mount, m, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH));
    }
    long t = syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE);
    say("open_tree", t);
    if (t >= 0) say("move_mount_clone", syscall(SYS_move_mount, t, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH));
    struct mount_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.attr_clr = MOUNT_ATTR_RDONLY;
    say("mount_setattr_root_rw", syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &attr, sizeof attr));
    say("fspick", syscall(SYS_fspick, AT_FDCWD, "/", 0));
    return 0;
}
