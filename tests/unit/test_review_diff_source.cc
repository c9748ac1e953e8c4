#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "review/diff/pager.h"
#include "review/diff/source.h"

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/layover-diffsrc.XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() { (void)!::system(("rm -rf '" + path + "'").c_str()); }
};

void write(const std::string& p, const std::string& data) { std::ofstream(p, std::ios::binary) << data; }

}  // namespace

TEST_CASE("review diff source: in_scope matches a path and its subtree only") {
    CHECK(review::in_scope({}, "a/b"));
    CHECK(review::in_scope({"a"}, "a"));
    CHECK(review::in_scope({"a"}, "a/b"));
    CHECK_FALSE(review::in_scope({"a"}, "ab"));
    CHECK_FALSE(review::in_scope({"a/b"}, "a"));
    CHECK(review::in_scope({""}, "x"));
}

TEST_CASE("review diff source: real entries are read without following symlinks") {
    TempDir t;
    ::mkdir((t.path + "/root").c_str(), 0755);
    ::mkdir((t.path + "/root/d").c_str(), 0755);
    write(t.path + "/root/d/f", "hello\n");
    ::chmod((t.path + "/root/d/f").c_str(), 0755);
    write(t.path + "/secret", "outside\n");
    ::symlink("../secret", (t.path + "/root/link").c_str());
    ::symlink(t.path.c_str(), (t.path + "/root/dirlink").c_str());
    ::mkfifo((t.path + "/root/fifo").c_str(), 0644);
    int root = ::open((t.path + "/root").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(root >= 0);

    auto f = review::read_real_side(root, "d/f", 1 << 20);
    REQUIRE(f);
    CHECK(f->exists);
    CHECK(f->mode == review::kGitExec);
    CHECK(f->data == "hello\n");

    auto l = review::read_real_side(root, "link", 1 << 20);
    REQUIRE(l);
    CHECK(l->mode == review::kGitSymlink);
    CHECK(l->data == "../secret");  // the link itself, never the victim's content

    auto through = review::read_real_side(root, "dirlink/secret", 1 << 20);
    REQUIRE(through);
    CHECK_FALSE(through->exists);  // a symlinked parent is not walked through

    auto fifo = review::read_real_side(root, "fifo", 1 << 20);  // must not block
    REQUIRE(fifo);
    CHECK_FALSE(fifo->exists);

    auto missing = review::read_real_side(root, "d/nope", 1 << 20);
    REQUIRE(missing);
    CHECK_FALSE(missing->exists);

    auto big = review::read_real_side(root, "d/f", 3);
    REQUIRE(big);
    CHECK(big->exists);
    CHECK_FALSE(big->loaded);
    CHECK(big->size == 6);
    ::close(root);
}

TEST_CASE("review diff pager: $PAGER selection") {
    CHECK(review::pager_command(nullptr, true) == "less -FRX");
    CHECK(review::pager_command(nullptr, false).empty());
    CHECK(review::pager_command("", true).empty());
    CHECK(review::pager_command("cat", true).empty());
    CHECK(review::pager_command("more -d", true) == "more -d");
}
