"""The floor of a first `layover status` (an info row of `make bench`): a C
loop, compiled here, that does only what a first status cannot skip for
a session of modified files, and nothing else: read each upper dir, and for
each regular file in it open it, fstat it, read its text (the risk marks),
close it, and stat its real twin (has it moved on since the copy-up?), on
two threads. No listing, no verdicts, no cache, no secret scan. Measured in
the status row's own loop, it says how far the goal against `find` is from
what the hardware allows. b is bench.py's Bench."""
from core import compile_c

FLOOR_C = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static int up_root, low_root;
static char tops[4096][256];
static int ntops;
static long seen[2];
static void walk(int up, int low, int t) {
    DIR *d = fdopendir(dup(up));
    if (!d) _exit(90);
    struct dirent *e;
    static __thread char buf[1 << 16];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        struct stat st, ls;
        if (e->d_type == DT_DIR) {
            int su = openat(up, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            int sl = low < 0 ? -1 : openat(low, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (su >= 0) walk(su, sl, t);
            if (su >= 0) close(su);
            if (sl >= 0) close(sl);
            continue;
        }
        if (e->d_type != DT_REG) continue;
        int fd = openat(up, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st)) _exit(91);
        for (off_t at = 0; at < st.st_size;) {
            ssize_t n = pread(fd, buf, sizeof buf, at);
            if (n <= 0) break;
            at += n;
        }
        close(fd);
        if (low >= 0) fstatat(low, e->d_name, &ls, AT_SYMLINK_NOFOLLOW);
        seen[t]++;
    }
    closedir(d);
}
static void *half(void *arg) {
    int t = (int)(long)arg;
    for (int i = t; i < ntops; i += 2) {
        int su = openat(up_root, tops[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int sl = openat(low_root, tops[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (su < 0) _exit(92);
        walk(su, sl, t);
        close(su);
        if (sl >= 0) close(sl);
    }
    return 0;
}
int main(int argc, char **argv) {
    if (argc != 4) return 2;
    up_root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    low_root = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fdopendir(dup(up_root));
    if (up_root < 0 || low_root < 0 || !d) return 93;
    struct dirent *e;
    while ((e = readdir(d)) && ntops < 4096)
        if (e->d_type == DT_DIR && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            snprintf(tops[ntops++], sizeof tops[0], "%s", e->d_name);
    closedir(d);
    pthread_t th;
    pthread_create(&th, 0, half, (void *)1L);
    half(0);
    pthread_join(th, 0);
    return seen[0] + seen[1] >= atol(argv[3]) ? 0 : 94;  /* every file seen, or not a floor */
}
"""


def binary(b):
    """The floor's path, compiled into the bench's dir; None without a C compiler."""
    return compile_c(FLOOR_C, b.p("status-floor"), "-pthread")
