// discard_staged, the rollback's removal of what staging left: a staged entry
// it cannot reach is an error, never passed over as removed (issue flake1).
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
#include "review/apply/commit.h"

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/layover-discard-XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() {
        int fd = ::open("/tmp", O_RDONLY | O_DIRECTORY);
        (void)review::remove_tree_at(fd, path.substr(5));
        ::close(fd);
    }
};

// In a child: the checks' number that failed, 0 when all held.
int discard_checks(const std::string& root) {
    int rfd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0) return 1;
    review::DirCache dirs(rfd);
    review::CommitCtx ctx{rfd, dirs, -1, -1};
    review::Unit u;
    u.path = "d/new";
    u.tmp = "d/.layover-tmp.abc.1";
    review::Unit gone;
    gone.path = "nodir/new";
    gone.tmp = "nodir/.layover-tmp.abc.2";
    struct stat st {};
    // Out of fds: the directory holding the staged tree cannot be opened.
    int low = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (low < 0) return 2;
    ::close(low);
    struct rlimit was {};
    if (::getrlimit(RLIMIT_NOFILE, &was) != 0) return 3;
    struct rlimit none = was;
    none.rlim_cur = static_cast<rlim_t>(low);
    if (::setrlimit(RLIMIT_NOFILE, &none) != 0) return 4;
    auto r = review::discard_staged(ctx, u);
    if (::setrlimit(RLIMIT_NOFILE, &was) != 0) return 5;
    if (r.ok()) return 6;  // the copy stays: not to be called removed
    if (r.error().code != EMFILE) return 7;
    if (::fstatat(rfd, u.tmp.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return 8;
    // Gone with its directory: nothing to remove, and no error.
    if (!review::discard_staged(ctx, gone).ok()) return 9;
    // Reachable again: removed (mode 000 and all).
    if (!review::discard_staged(ctx, u).ok()) return 10;
    if (::fstatat(rfd, u.tmp.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return 11;
    return 0;
}

}  // namespace

TEST_CASE("review commit: a staged tree a rollback cannot reach is an error, never passed over as removed") {
    // The rollback that followed said "nothing was applied" and removed its
    // journal, so no later run removed the staged copy (with the agent's
    // files in it) from the real tree.
    TempDir root;
    std::string staged = root.path + "/d/.layover-tmp.abc.1";
    REQUIRE(::mkdir((root.path + "/d").c_str(), 0755) == 0);
    REQUIRE(::mkdir(staged.c_str(), 0700) == 0);
    int fd = ::open((staged + "/secret").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "s\n", 2) == 2);
    ::close(fd);
    REQUIRE(::chmod(staged.c_str(), 0) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) ::_exit(discard_checks(root.path));
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    INFO("status " << status);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}
