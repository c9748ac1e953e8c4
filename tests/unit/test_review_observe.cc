// walk_tree (the after-state of applied trees, for undo's checks) walks the
// first dir with two or more subdirs on two threads: it must list exactly
// what a plain one-thread walk sees.
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "helper/base/fd.h"
#include "review/apply/observe.h"
#include "tests/unit/capture_tree.h"

namespace {

std::vector<std::string>* g_seen = nullptr;
size_t g_skip = 0;

int note(const char* path, const struct stat* st, int, struct FTW*) {
    std::string p(path);
    if (p.size() <= g_skip) return 0;  // the walked dir itself
    g_seen->push_back(p.substr(g_skip) + " " + std::to_string(st->st_ino) + " " + std::to_string(st->st_mode) + " " +
                      std::to_string(S_ISDIR(st->st_mode) ? 0 : st->st_size));
    return 0;
}

}  // namespace

TEST_CASE("review observe: walk_tree lists exactly what a one-thread walk sees") {
    testtree::TempDir t;
    std::string top = t.path + "/top";
    testtree::make(top, "dir");
    testtree::make(top + "/only", "dir");  // one subdir: the split waits for a wider dir below
    testtree::make(top + "/only/a.txt", "file:a");
    std::string wide = top + "/only/wide";
    testtree::make(wide, "dir");
    for (int i = 0; i < 7; i++) {
        std::string d = wide + "/d" + std::to_string(i);
        testtree::make(d, "dir");
        testtree::make(d + "/f.txt", "file:" + std::string(static_cast<size_t>(i) * 10, 'x'));
        testtree::make(d + "/link", "symlink:f.txt");
        testtree::make(d + "/sub", "dir");
        testtree::make(d + "/sub/g.txt", "file:g");
    }
    testtree::make(wide + "/z.txt", "file:last");

    std::vector<std::string> want;
    g_seen = &want;
    g_skip = top.size() + 1;
    REQUIRE(::nftw(top.c_str(), note, 16, FTW_PHYS) == 0);
    std::sort(want.begin(), want.end());

    base::Fd root(::open(t.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    auto got = review::walk_tree(root.get(), "top");
    INFO((got ? "" : got.error().message));
    REQUIRE(got.ok());
    std::vector<std::string> seen;
    for (const auto& e : got.value()) {
        struct stat st {};
        REQUIRE(::lstat((top + "/" + e.path).c_str(), &st) == 0);
        seen.push_back(e.path + " " + std::to_string(e.ino) + " " + std::to_string(st.st_mode) + " " +
                       std::to_string(S_ISDIR(st.st_mode) ? 0 : e.size));
        CHECK(e.ino == st.st_ino);
    }
    std::sort(seen.begin(), seen.end());
    CHECK(seen == want);
    CHECK(seen.size() == 4 + 7 * 5);
    // Sorted by path, as undo's comparison expects.
    CHECK(std::is_sorted(got->begin(), got->end(),
                         [](const review::EntryStat& a, const review::EntryStat& b) { return a.path < b.path; }));
    CHECK_FALSE(review::walk_tree(root.get(), "nope").ok());
}
