#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "helper/base/fs/beneath.h"
#include "review/txn/txn.h"

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/layover-beneath-XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() {
        int fd = ::open("/tmp", O_RDONLY | O_DIRECTORY);
        (void)review::remove_tree_at(fd, path.substr(5));
        ::close(fd);
    }
};

void write(const std::string& p, const std::string& s) {
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size()));
    ::close(fd);
}

}  // namespace

TEST_CASE("review beneath: safe_relpath rejects traversal, absolute, empty and dot components") {
    CHECK(review::safe_relpath("a"));
    CHECK(review::safe_relpath("a/b.c/..d"));
    CHECK_FALSE(review::safe_relpath(""));
    CHECK_FALSE(review::safe_relpath("/etc/passwd"));
    CHECK_FALSE(review::safe_relpath("../x"));
    CHECK_FALSE(review::safe_relpath("a/../../x"));
    CHECK_FALSE(review::safe_relpath("a//b"));
    CHECK_FALSE(review::safe_relpath("a/./b"));
    CHECK_FALSE(review::safe_relpath("a/"));
    CHECK_FALSE(review::safe_relpath(std::string("a\0b", 3)));
    CHECK_FALSE(review::safe_relpath(std::string(256, 'x')));
}

TEST_CASE("review beneath: split_parent") {
    CHECK(review::split_parent("a/b/c") == std::make_pair(std::string("a/b"), std::string("c")));
    CHECK(review::split_parent("c") == std::make_pair(std::string(""), std::string("c")));
}

TEST_CASE("review beneath: names reserved for staging and the undo store") {
    CHECK(review::is_reserved_path(".layover-undo"));
    CHECK(review::is_reserved_path(".layover-undo/x/1"));
    CHECK(review::is_reserved_path("a/.layover-tmp.abc.1"));
    CHECK(review::is_reserved_path(".layover-tmp.x/y"));
    CHECK_FALSE(review::is_reserved_path("a/.layover-undox"));
    // Below the top too: an undo store of an apply to that dir (attack14).
    CHECK(review::is_reserved_path("proj/.layover-undo"));
    CHECK(review::is_reserved_path("a/b/.layover-undo/ffffffffffff/undo.json"));
    CHECK_FALSE(review::is_reserved_path("a/x.layover-undo/y"));
    CHECK_FALSE(review::is_reserved_path("a/.layover-undo-old"));
    CHECK_FALSE(review::is_reserved_path("a.layover-tmp.x"));
}

TEST_CASE("review beneath: a symlink on the way is never followed (openat2 and fallback walk)") {
    TempDir root, outside;
    write(outside.path + "/victim", "secret");
    REQUIRE(::mkdir((root.path + "/d").c_str(), 0755) == 0);
    write(root.path + "/d/f", "ok");
    REQUIRE(::symlink(outside.path.c_str(), (root.path + "/evil").c_str()) == 0);
    REQUIRE(::symlink("f", (root.path + "/d/lnk").c_str()) == 0);
    int rfd = ::open(root.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(rfd >= 0);
    for (bool fallback : {false, true}) {
        INFO("fallback walk: " << fallback);
        review::set_force_fallback(fallback);
        auto ok = review::open_beneath(rfd, "d/f", O_RDONLY);
        CHECK(ok.ok());
        auto through = review::open_beneath(rfd, "evil/victim", O_RDONLY);
        REQUIRE_FALSE(through.ok());
        CHECK(through.error().code == ELOOP);
        auto last = review::open_beneath(rfd, "d/lnk", O_RDONLY);
        REQUIRE_FALSE(last.ok());
        CHECK(last.error().code == ELOOP);
        auto link_itself = review::open_beneath(rfd, "d/lnk", O_PATH | O_NOFOLLOW);
        REQUIRE(link_itself.ok());
        struct stat st {};
        REQUIRE(::fstat(link_itself->get(), &st) == 0);
        CHECK(S_ISLNK(st.st_mode));
        auto dotdot = review::open_beneath(rfd, "../x", O_RDONLY);
        CHECK_FALSE(dotdot.ok());
        auto create = review::open_beneath(rfd, "evil/new", O_WRONLY | O_CREAT | O_EXCL, 0600);
        CHECK_FALSE(create.ok());
    }
    review::set_force_fallback(false);
    ::close(rfd);
    struct stat st {};
    CHECK(::stat((outside.path + "/new").c_str(), &st) != 0);
}

TEST_CASE("review beneath: remove_tree_at removes mode-000 directories and never follows links") {
    TempDir root, outside;
    write(outside.path + "/keep", "x");
    REQUIRE(::mkdir((root.path + "/t").c_str(), 0755) == 0);
    REQUIRE(::mkdir((root.path + "/t/locked").c_str(), 0755) == 0);
    write(root.path + "/t/locked/f", "y");
    REQUIRE(::symlink(outside.path.c_str(), (root.path + "/t/out").c_str()) == 0);
    REQUIRE(::chmod((root.path + "/t/locked").c_str(), 0) == 0);
    int rfd = ::open(root.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    auto r = review::remove_tree_at(rfd, "t");
    ::close(rfd);
    CHECK(r.ok());
    struct stat st {};
    CHECK(::lstat((root.path + "/t").c_str(), &st) != 0);
    CHECK(::stat((outside.path + "/keep").c_str(), &st) == 0);
}

TEST_CASE("review beneath: remove_tree_at removes a tree deeper than the stack and the fd limit allow") {
    // An agent nests dirs without end (the kernel bounds one call's path, not
    // a tree's depth). Found by the attack pass of 26 Nov: `discard --now` of
    // a session holding a 30,000-deep chain died of SIGSEGV (one stack frame
    // and one fd a level) and left the session's dir, unlisted, behind.
    TempDir root;
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        struct rlimit small {
            256 * 1024, 256 * 1024
        };
        struct rlimit fds {
            200, 200
        };
        if (::setrlimit(RLIMIT_STACK, &small) != 0 || ::setrlimit(RLIMIT_NOFILE, &fds) != 0) ::_exit(3);
        int fd = ::open(root.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (int i = 0; i < 3000 && fd >= 0; i++) {
            if (::mkdirat(fd, "d", 0755) != 0) ::_exit(4);
            int next = ::openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (i % 100 == 0) ::close(::openat(fd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
            ::close(fd);
            fd = next;
        }
        if (fd < 0) ::_exit(5);
        ::fchmod(fd, 0);  // the deepest one unlistable until opened up
        ::close(fd);
        int rfd = ::open(root.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        auto r = review::remove_tree_at(rfd, "d");
        struct stat st {};
        ::_exit(!r.ok() ? 6 : ::fstatat(rfd, "d", &st, AT_SYMLINK_NOFOLLOW) == 0 ? 7 : 0);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    INFO("status " << status);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("review txn: journal/undo record round trip keeps raw bytes; hostile records are refused") {
    review::Txn t;
    t.id = "abc123";
    t.target = "/home/u";
    t.dev = 1;
    t.ino = 2;
    t.state = review::TxnState::Done;
    t.store = ".layover-undo/abc123";
    review::Unit u;
    u.path = "dir/bad\xff\nname";
    u.op = review::Op::Replace;
    u.tmp = "dir/.layover-tmp.abc123.1";
    u.slot = "1";
    u.old_xattrs["user.k"] = std::string("v\0w", 3);
    u.after.exists = true;
    u.after.type = capture::Type::File;
    t.units.push_back(u);
    auto back = review::txn_from_json(review::txn_to_json(t));
    REQUIRE(back.ok());
    REQUIRE(back->units.size() == 1);
    CHECK(back->units[0].path == u.path);
    CHECK(back->units[0].op == review::Op::Replace);
    CHECK(back->units[0].old_xattrs.at("user.k") == std::string("v\0w", 3));
    CHECK(back->units[0].after.type == capture::Type::File);

    auto hostile = t;
    hostile.units[0].path = "../../etc/passwd";
    CHECK_FALSE(review::txn_from_json(review::txn_to_json(hostile)).ok());
    hostile = t;
    hostile.units[0].slot = "../x";
    CHECK_FALSE(review::txn_from_json(review::txn_to_json(hostile)).ok());
    hostile = t;
    hostile.units[0].tmp = "elsewhere/.layover-tmp.x";
    CHECK_FALSE(review::txn_from_json(review::txn_to_json(hostile)).ok());
    hostile = t;
    hostile.store = "../../x";
    CHECK_FALSE(review::txn_from_json(review::txn_to_json(hostile)).ok());
}
