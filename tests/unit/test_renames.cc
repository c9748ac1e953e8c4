// Directory renames (helper/sandbox/rename/rename_*): the notified call's decoding,
// the supervisor-worker messages, path splitting, the fast-path rule, and
// the worker's copy and removal of a tree on a real directory.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>

#include "helper/base/fd.h"
#include "helper/sandbox/rename/rename_call.h"
#include "helper/sandbox/rename/rename_tree.h"
#include "helper/sandbox/rename/rename_worker.h"
#include "helper/store/records/rename_temps.h"
#include "tests/unit/capture_tree.h"

using namespace rename_call;

namespace {
const std::string kKey = "000102030405060708090a0b0c0d0e0f";
}  // namespace

TEST_CASE("renames: the three syscalls decode to one shape; others are not ours") {
    uint64_t a[6] = {0xffffffff00000005ull, 0x1000, static_cast<uint64_t>(AT_FDCWD), 0x2000, RENAME_NOREPLACE, 0};
    auto r = decode(__NR_renameat2, a);
    REQUIRE(r);
    CHECK(r->olddirfd == 5);  // the kernel reads an int: the high half is ignored
    CHECK(r->newdirfd == AT_FDCWD);
    CHECK(r->oldpath == 0x1000);
    CHECK(r->newpath == 0x2000);
    CHECK(r->flags == RENAME_NOREPLACE);
    auto at = decode(__NR_renameat, a);
    REQUIRE(at);
    CHECK(at->flags == 0);  // renameat has no flags, whatever is in the fifth register
#ifdef __NR_rename
    auto plain = decode(__NR_rename, a);
    REQUIRE(plain);
    CHECK(plain->olddirfd == AT_FDCWD);
    CHECK(plain->newdirfd == AT_FDCWD);
    CHECK(plain->oldpath == a[0]);
    CHECK(plain->newpath == a[1]);
#endif
    CHECK_FALSE(decode(__NR_openat, a));
    CHECK_FALSE(decode(__NR_linkat, a));
    auto link = decode_link(__NR_linkat, a);
    REQUIRE(link);
    CHECK(link->newpath == a[3]);
    CHECK(link->flags == a[4]);  // linkat's own flags (AT_SYMLINK_FOLLOW, AT_EMPTY_PATH)
    CHECK_FALSE(decode_link(__NR_renameat2, a));
    CHECK(notified_syscalls().size() == 5);
}

TEST_CASE("renames: requests and replies survive the wire; damaged ones are refused") {
    Request q{42, RENAME_NOREPLACE, true, false, "a/b/src", "/abs/lib", false};
    auto back = decode_request(encode(q));
    REQUIRE(back);
    CHECK(back->id == 42);
    CHECK(back->flags == RENAME_NOREPLACE);
    CHECK(back->old_fd);
    CHECK_FALSE(back->new_fd);
    CHECK(back->oldpath == "a/b/src");
    CHECK(back->newpath == "/abs/lib");
    Request empty{7, 0, false, true, "", "", true};  // the kernel answers ENOENT; the message stays valid
    auto e = decode_request(encode(empty));
    REQUIRE(e);
    CHECK(e->oldpath.empty());
    CHECK(e->new_fd);
    CHECK(e->plain);
    CHECK_FALSE(back->plain);
    CHECK_FALSE(back->link);
    Request lk{8, AT_SYMLINK_FOLLOW, true, true, "fd/3", "notes.txt", false, true};
    auto l = decode_request(encode(lk));
    REQUIRE(l);
    CHECK(l->link);
    CHECK_FALSE(l->plain);
    CHECK(l->flags == AT_SYMLINK_FOLLOW);
    CHECK_FALSE(l->sweep);
    Request sw{9, 0, true, true, "old", "new", false, false, true};  // a dead worker's call, to its successor
    auto s = decode_request(encode(sw));
    REQUIRE(s);
    CHECK(s->sweep);
    CHECK(s->id == 9);
    CHECK(s->newpath == "new");

    std::string msg = encode(q);
    CHECK_FALSE(decode_request(msg.substr(0, 10)));           // short header
    CHECK_FALSE(decode_request(msg.substr(0, 15)));           // no separator
    CHECK_FALSE(decode_request(msg + std::string(1, '\0')));  // a third part
    std::string bad = msg;
    bad[12] = 32;  // bits beyond the five
    CHECK_FALSE(decode_request(bad));

    auto rep = decode_reply(encode(Reply{99, EXDEV}));
    REQUIRE(rep);
    CHECK(rep->id == 99);
    CHECK(rep->err == EXDEV);
    CHECK_FALSE(decode_reply(encode(Reply{1, 0}) + "x"));
    CHECK_FALSE(decode_reply(encode(Reply{1, -5})));
    CHECK_FALSE(decode_reply("short"));
}

TEST_CASE("renames: a path splits into its parent and last name, trailing slashes dropped") {
    auto s = [](const std::string& p) {
        auto r = split(p);
        return r.parent + "|" + r.name;
    };
    CHECK(s("src") == ".|src");
    CHECK(s("src/") == ".|src");
    CHECK(s("a/b/src//") == "a/b|src");
    CHECK(s("/src") == "/|src");
    CHECK(s("//src") == "/|src");
    CHECK(s("a//src") == "a|src");
    CHECK(s("/a/b") == "/a|b");
}

TEST_CASE("renames: only a directory source, not exchanged, leaves the fast path") {
    CHECK(may_need_emulation(0, true));
    CHECK(may_need_emulation(RENAME_NOREPLACE, true));
    CHECK_FALSE(may_need_emulation(RENAME_EXCHANGE, true));
    CHECK_FALSE(may_need_emulation(0, false));
}

namespace {

std::string p(const testtree::TempDir& t, const std::string& rel) { return t.path + "/" + rel; }

struct stat st_of(const std::string& path) {
    struct stat st;
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st;
}

}  // namespace

TEST_CASE("renames: the copy keeps contents, modes, times, symlinks, hard links, fifos and user xattrs") {
    testtree::TempDir t;
    testtree::make(p(t, "src"), "dir");
    testtree::make(p(t, "src/f"), "file:hello");
    testtree::make(p(t, "src/ro"), "dir");
    testtree::make(p(t, "src/ro/inner"), "file:deep");
    testtree::make(p(t, "src/link"), "symlink:/etc/passwd");
    testtree::make(p(t, "src/fifo"), "fifo");
    REQUIRE(::link(p(t, "src/f").c_str(), p(t, "src/ro/hard").c_str()) == 0);
    testtree::set_xattr(p(t, "src/f"), "user.note", "kept");
    REQUIRE(::chmod(p(t, "src/f").c_str(), 0640) == 0);
    REQUIRE(::chmod(p(t, "src/ro").c_str(), 0555) == 0);
    struct timespec old[2] = {{1000, 5}, {2000, 7}};
    REQUIRE(::utimensat(AT_FDCWD, p(t, "src/f").c_str(), old, 0) == 0);
    REQUIRE(::utimensat(AT_FDCWD, p(t, "src/link").c_str(), old, AT_SYMLINK_NOFOLLOW) == 0);
    testtree::make(p(t, "dst"), "dir");

    base::Fd src(::open(p(t, "src").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    base::Fd dst(::open(p(t, "dst").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    auto copied = rename_tree::copy_tree(src.get(), dst.get());
    REQUIRE(copied);
    CHECK(testtree::read_text(p(t, "dst/f")) == "hello");
    CHECK(testtree::read_text(p(t, "dst/ro/inner")) == "deep");
    CHECK((st_of(p(t, "dst/f")).st_mode & 07777) == 0640);
    CHECK((st_of(p(t, "dst/ro")).st_mode & 07777) == 0555);
    CHECK(st_of(p(t, "dst/f")).st_mtim.tv_sec == 2000);
    CHECK(st_of(p(t, "dst/f")).st_mtim.tv_nsec == 7);
    CHECK(st_of(p(t, "dst/link")).st_mtim.tv_sec == 2000);
    CHECK(S_ISFIFO(st_of(p(t, "dst/fifo")).st_mode));
    char target[64] = {};
    REQUIRE(::readlink(p(t, "dst/link").c_str(), target, sizeof target - 1) > 0);
    CHECK(std::string(target) == "/etc/passwd");  // copied as a link, never followed
    CHECK(st_of(p(t, "dst/f")).st_ino == st_of(p(t, "dst/ro/hard")).st_ino);
    CHECK(st_of(p(t, "dst/f")).st_ino != st_of(p(t, "src/f")).st_ino);
    char value[16] = {};
    CHECK(::getxattr(p(t, "dst/f").c_str(), "user.note", value, sizeof value) == 4);
    CHECK(std::string(value) == "kept");

    // Removal opens up our own read-only directory, as rm -rf does.
    auto emptied = rename_tree::empty_tree(src.get());
    REQUIRE(emptied);
    CHECK(::rmdir(p(t, "src").c_str()) == 0);
    CHECK(::chmod(p(t, "dst/ro").c_str(), 0755) == 0);  // so TempDir can clean up
}

TEST_CASE("renames: the fallback refuses anything but an overlay, changing nothing") {
    testtree::TempDir t;
    testtree::make(p(t, "a"), "dir");
    testtree::make(p(t, "a/f"), "file:x");
    base::Fd dir(::open(t.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    auto moved = rename_tree::move_by_copy(dir.get(), "a", dir.get(), "b", 0, rename_temps::temp_name(kKey, 1));
    REQUIRE_FALSE(moved);
    CHECK(moved.error().code == EXDEV);
    CHECK(testtree::read_text(p(t, "a/f")) == "x");
    CHECK(::access(p(t, "b").c_str(), F_OK) != 0);
    CHECK(::access(p(t, rename_temps::temp_name(kKey, 1)).c_str(), F_OK) != 0);
    auto exchange =
        rename_tree::move_by_copy(dir.get(), "a", dir.get(), "b", RENAME_EXCHANGE, rename_temps::temp_name(kKey, 1));
    REQUIRE_FALSE(exchange);
    CHECK(exchange.error().code == EXDEV);
}

TEST_CASE("renames: the worker's own step is renameat2 with the task's flags") {
    testtree::TempDir t;
    testtree::make(p(t, "a"), "dir");
    testtree::make(p(t, "b"), "file:b");
    base::Fd dir(::open(t.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    Request r{1, RENAME_NOREPLACE, true, true, "a", "b", false};
    CHECK(rename_worker::perform(dir.get(), dir.get(), r, kKey) == EEXIST);
    r.newpath = "c";
    CHECK(rename_worker::perform(dir.get(), dir.get(), r, kKey) == 0);
    CHECK(st_of(p(t, "c")).st_mode & S_IFDIR);
    Request abs{2, 0, false, false, p(t, "c"), p(t, "d"), false};  // absolute: no dirfd
    CHECK(rename_worker::perform(AT_FDCWD, AT_FDCWD, abs, kKey) == 0);
    CHECK(::access(p(t, "d").c_str(), F_OK) == 0);
    Request missing{3, 0, true, true, "nope", "x", false};
    CHECK(rename_worker::perform(dir.get(), dir.get(), missing, kKey) == ENOENT);
}

TEST_CASE("links: a source through /proc/self or AT_EMPTY_PATH becomes the task's own entry in its /proc, followed") {
    TaskIds ids{7, 9};  // a thread 9 of process 7, as the sandbox's pid namespace numbers them
    auto fd = proc_link_source(5, "", AT_EMPTY_PATH, ids);
    REQUIRE(fd);
    CHECK(fd->path == "/proc/9/fd/5");      // the calling thread's fd table
    CHECK(fd->flags == AT_SYMLINK_FOLLOW);  // the fd itself, reached through its magic link
    auto cwd = proc_link_source(AT_FDCWD, "", AT_EMPTY_PATH, ids);
    REQUIRE(cwd);
    CHECK(cwd->path == "/proc/9/cwd");  // the kernel refuses a dir either way
    auto self = proc_link_source(AT_FDCWD, "/proc/self/fd/4", AT_SYMLINK_FOLLOW, ids);
    REQUIRE(self);
    CHECK(self->path == "/proc/7/fd/4");
    CHECK(self->flags == AT_SYMLINK_FOLLOW);
    auto thread = proc_link_source(AT_FDCWD, "/proc/thread-self/fd/4", 0, ids);
    REQUIRE(thread);
    CHECK(thread->path == "/proc/7/task/9/fd/4");
    CHECK(thread->flags == 0);  // not followed: the magic link itself, which the kernel refuses (EXDEV)
    // A `..` stays in the sandbox's /proc (the worker resolves it from the
    // task's root), never the host's /proc and / (attack19).
    auto up = proc_link_source(AT_FDCWD, "/proc/self/../../etc/passwd", AT_SYMLINK_FOLLOW, ids);
    REQUIRE(up);
    CHECK(up->path == "/proc/7/../../etc/passwd");
    auto bare = proc_link_source(AT_FDCWD, "/proc/self", 0, ids);
    REQUIRE(bare);
    CHECK(bare->path == "/proc/7");
    CHECK_FALSE(proc_link_source(AT_FDCWD, "notes.txt", AT_SYMLINK_FOLLOW, ids));
    CHECK_FALSE(proc_link_source(AT_FDCWD, "/proc/selfish/fd/3", 0, ids));
    CHECK_FALSE(proc_link_source(3, "", 0, ids));  // an empty path without AT_EMPTY_PATH: ENOENT, the kernel's
    CHECK_FALSE(proc_link_source(AT_FDCWD, "/proc/1/fd/3", 0, ids));  // another task's, as the sandbox's /proc shows it
    // Other spellings of /proc/self, which the kernel resolves alike: the
    // worker, outside the sandbox's pid namespace, found no `self` there
    // (ENOENT where the task's own link works: attack20).
    for (const char* spelled : {"//proc/self/fd/4", "/proc//self/fd/4", "/./proc/./self/fd/4", "/proc/self//fd/4"}) {
        auto other = proc_link_source(AT_FDCWD, spelled, AT_SYMLINK_FOLLOW, ids);
        REQUIRE(other);
        CHECK((other->path == "/proc/7/fd/4" || other->path == "/proc/7//fd/4"));
    }
    auto thread2 = proc_link_source(AT_FDCWD, "//proc/./thread-self/fd/4", 0, ids);
    REQUIRE(thread2);
    CHECK(thread2->path == "/proc/7/task/9/fd/4");
    CHECK_FALSE(proc_link_source(AT_FDCWD, "/proc/.self/fd/3", 0, ids));
    CHECK_FALSE(proc_link_source(AT_FDCWD, "/proc/../proc/self/fd/3", 0, ids));  // left as it is: ENOENT
    CHECK_FALSE(proc_link_source(AT_FDCWD, "proc/self/fd/3", 0, ids));           // relative: from its dirfd
    CHECK(own_proc_source("/proc/self/fd/3", 0));
    CHECK(own_proc_source("", AT_EMPTY_PATH));
    CHECK_FALSE(own_proc_source("/proc/1/fd/3", 0));
    CHECK_FALSE(own_proc_source("", 0));
}

TEST_CASE("links: the task's numbers in its own pid namespace are the last of NStgid and NSpid") {
    auto ids = task_ids("Name:\tpython3\nTgid:\t4242\nNgid:\t0\nPid:\t4250\nNStgid:\t4242\t7\nNSpid:\t4250\t9\n");
    REQUIRE(ids);
    CHECK(ids->tgid == 7);
    CHECK(ids->tid == 9);
    auto host = task_ids("Tgid:\t5\nNStgid:\t5\nNSpid:\t6\n");  // one namespace: its own numbers
    REQUIRE(host);
    CHECK((host->tgid == 5 && host->tid == 6));
    CHECK_FALSE(task_ids(""));
    CHECK_FALSE(task_ids("Tgid:\t5\nPid:\t6\n"));  // no NS lines (Linux < 4.1)
    CHECK_FALSE(task_ids("NStgid:\t5\tx\nNSpid:\t6\t7\n"));
}

TEST_CASE("links: the worker's step is linkat with the task's flags, an O_TMPFILE reached through /proc/PID") {
    testtree::TempDir t;
    testtree::make(p(t, "a"), "file:a");
    base::Fd dir(::open(t.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    Request r{1, 0, true, true, "a", "b", false, true};
    CHECK(rename_worker::perform(dir.get(), dir.get(), r, kKey) == 0);
    CHECK(st_of(p(t, "b")).st_nlink == 2);
    CHECK(rename_worker::perform(dir.get(), dir.get(), r, kKey) == EEXIST);
    base::Fd tmp(::open(t.path.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600));
    REQUIRE(tmp.valid());
    REQUIRE(::write(tmp.get(), "tmp", 3) == 3);
    auto src = proc_link_source(tmp.get(), "", AT_EMPTY_PATH, TaskIds{::getpid(), ::getpid()});
    REQUIRE(src);
    Request made{2, src->flags, false, true, src->path, "made", false, true};
    CHECK(rename_worker::perform(AT_FDCWD, dir.get(), made, kKey) == 0);
    CHECK(testtree::read_text(p(t, "made")) == "tmp");
}
