// Session history on disk (helper/store/layers/steps.h): records read as untrusted
// input, the layer dirs' numbering, freezing the live upper, and the
// flattened upper capture scans.
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>

#include "helper/store/layers/steps.h"
#include "overlay/options.h"
#include "tests/unit/capture_tree.h"

namespace {

bool exists(const std::string& p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0;
}

std::string xattr(const std::string& p, const char* k) {
    char b[64];
    ssize_t n = ::lgetxattr(p.c_str(), k, b, sizeof b);
    return n < 0 ? "" : std::string(b, static_cast<size_t>(n));
}

bool whiteout(const std::string& p) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) return false;
    if (S_ISCHR(st.st_mode)) return st.st_rdev == 0;
    return S_ISREG(st.st_mode) && st.st_size == 0 && xattr(p, "user.overlay.whiteout") == "y";
}

}  // namespace

TEST_CASE("steps: a record writes and reads back, byte paths included", "[steps]") {
    steps::Record r;
    r.n = 3;
    r.label = "make \"all\"\n";
    r.start = "2026-11-25T20:00:00Z";
    r.end = "2026-11-25T20:01:00Z";
    r.paths = {{"a/b.txt", "A"}, {std::string("bad\xff") + "name", "D"}, {"m", "mode"}};
    auto back = steps::record_from_text(steps::record_to_text(r));
    REQUIRE(back.ok());
    CHECK(back->n == 3);
    CHECK(back->label == r.label);
    CHECK(back->start == r.start);
    CHECK(back->end == r.end);
    CHECK(back->paths == r.paths);
    CHECK_FALSE(back->pending);
    r.pending = true;  // a freeze's record, its paths to be computed
    r.paths.clear();
    back = steps::record_from_text(steps::record_to_text(r));
    REQUIRE(back.ok());
    CHECK(back->pending);
    CHECK(back->paths.empty());
    CHECK_FALSE(steps::record_from_text("{\"step\": 1, \"pending\": 1, \"paths\": []}").ok());
    auto live = steps::live_from_text(steps::live_to_text({"cmd", "2026-11-25T20:00:00Z", ""}));
    REQUIRE(live.ok());
    CHECK(live->label == "cmd");
    CHECK(live->end.empty());
    CHECK(steps::live_to_text({"cmd", "a", ""}).find("end") == std::string::npos);  // as before
    auto ended = steps::live_from_text(steps::live_to_text({"cmd", "2026-11-25T20:00:00Z", "2026-11-25T21:00:00Z"}));
    REQUIRE(ended.ok());
    CHECK(ended->end == "2026-11-25T21:00:00Z");
}

TEST_CASE("steps: the record reader refuses what a record never holds", "[steps]") {
    const char* bad[] = {
        "",
        "[]",
        "{\"label\": \"x\"}",
        "{\"step\": 0}",
        "{\"step\": 10000}",
        "{\"step\": 1.5}",
        "{\"step\": -1}",
        "{\"step\": 1, \"paths\": [{\"path\": \"a\", \"kind\": \"X\"}]}",
        "{\"step\": 1, \"paths\": [{\"path\": \"a\"}]}",
        "{\"step\": 1, \"paths\": [{\"path\": \"/etc/passwd\", \"kind\": \"A\"}]}",
        "{\"step\": 1, \"paths\": [{\"path\": \"a/../../b\", \"kind\": \"A\"}]}",
        "{\"step\": 1, \"paths\": [{\"path\": \"a//b\", \"kind\": \"A\"}]}",
        "{\"step\": 1, \"paths\": [{\"path\": \"\", \"kind\": \"A\"}]}",
        "{\"step\": 1, \"paths\": [{\"path\": \"x\", \"path_b64\": \"!!\", \"kind\": \"A\"}]}",
        "{\"step\": 1, \"paths\": {}}",
        "{\"step\": 1} trailing",
        "{\"step\": 1, \"label\": 5}",
    };
    for (const char* t : bad) {
        INFO(t);
        CHECK_FALSE(steps::record_from_text(t).ok());
    }
    std::string huge = "{\"step\": 1, \"label\": \"" + std::string(5000, 'x') + "\"}";
    CHECK_FALSE(steps::record_from_text(huge).ok());
    // Unknown keys are skipped (a later version may add some).
    auto ok = steps::record_from_text("{\"step\": 2, \"future\": {\"a\": [1]}, \"paths\": []}");
    REQUIRE(ok.ok());
    CHECK(ok->n == 2);
}

TEST_CASE("steps: layer dirs are numbered from 0001 without gaps", "[steps]") {
    testtree::TempDir t;
    auto n = steps::count(t.path);
    REQUIRE(n.ok());
    CHECK(n.value() == 0);
    testtree::make(t.path + "/steps", "dir");
    testtree::make(t.path + "/steps/0001", "dir");
    testtree::make(t.path + "/steps/0001.json", "file:{}");
    testtree::make(t.path + "/steps/0002", "dir");
    testtree::make(t.path + "/steps/live.json", "file:{}");
    n = steps::count(t.path);
    REQUIRE(n.ok());
    CHECK(n.value() == 2);
    // The bad record of step 1 is shown as missing, never trusted.
    auto all = steps::read_all(t.path);
    REQUIRE(all.ok());
    REQUIRE(all->size() == 2);
    CHECK(all->at(0).missing);
    CHECK(all->at(1).missing);
    testtree::make(t.path + "/steps/0004", "dir");
    CHECK_FALSE(steps::count(t.path).ok());
    ::rmdir((t.path + "/steps/0004").c_str());
    testtree::make(t.path + "/steps/0003", "symlink:/etc");
    CHECK_FALSE(steps::count(t.path).ok());
    ::unlink((t.path + "/steps/0003").c_str());
    testtree::make(t.path + "/steps/evil", "file:x");
    CHECK_FALSE(steps::count(t.path).ok());
}

TEST_CASE("steps: freezing moves the live upper to the next step, with its touched paths", "[steps]") {
    testtree::TempDir t;
    std::string s = t.path + "/s", target = t.path + "/target";
    testtree::make(target, "dir");
    testtree::make(target + "/keep.txt", "file:keep\n");
    testtree::make(target + "/gone.txt", "file:gone\n");
    testtree::make(target + "/same.txt", "file:same\n");
    testtree::make(s, "dir");
    testtree::make(s + "/upper", "dir");
    // An empty live upper is no step.
    auto n = steps::freeze_live(s, target, "2026-11-25T20:00:00Z");
    REQUIRE(n.ok());
    CHECK(n.value() == 0);
    CHECK_FALSE(exists(s + "/steps/0001"));
    REQUIRE(steps::write_live(s, {"first", "2026-11-25T19:00:00Z", ""}).ok());
    testtree::make(s + "/upper/new.txt", "file:new\n");
    testtree::make(s + "/upper/keep.txt", "file:changed\n");
    testtree::make(s + "/upper/same.txt", "file:same\n");  // copied up, unchanged
    testtree::make(s + "/upper/gone.txt", "whiteout");
    n = steps::freeze_live(s, target, "2026-11-25T20:00:00Z");
    REQUIRE(n.ok());
    CHECK(n.value() == 1);
    CHECK(testtree::read_text(s + "/steps/0001/new.txt") == "new\n");
    CHECK(exists(s + "/upper"));
    CHECK_FALSE(exists(s + "/upper/new.txt"));
    // The freeze leaves the paths pending; settle computes and writes them, once.
    auto all = steps::read_all(s);
    REQUIRE(all.ok());
    REQUIRE(all->size() == 1);
    CHECK(all->at(0).pending);
    CHECK(all->at(0).paths.empty());
    auto settled = steps::settle(s, target);
    REQUIRE(settled.ok());
    CHECK(settled.value() == 1);
    settled = steps::settle(s, target);
    REQUIRE(settled.ok());
    CHECK(settled.value() == 0);
    all = steps::read_all(s);
    REQUIRE(all.ok());
    REQUIRE(all->size() == 1);
    const auto& r = all->at(0);
    CHECK_FALSE(r.pending);
    CHECK_FALSE(r.missing);
    CHECK(r.label == "first");
    CHECK(r.start == "2026-11-25T19:00:00Z");
    CHECK(r.end == "2026-11-25T20:00:00Z");
    std::vector<steps::Touched> want = {{"gone.txt", "D"}, {"keep.txt", "M"}, {"new.txt", "A"}};
    CHECK(r.paths == want);
    // Step 2 against step 1 over the target.
    testtree::make(s + "/upper/new.txt", "whiteout");
    testtree::make(s + "/upper/keep.txt", "file:changed\n");
    ::chmod((s + "/upper/keep.txt").c_str(), 0600);
    n = steps::freeze_live(s, target, "2026-11-25T20:05:00Z");
    REQUIRE(n.ok());
    CHECK(n.value() == 2);
    REQUIRE(steps::settle(s, target).ok());
    all = steps::read_all(s);
    REQUIRE(all.ok());
    REQUIRE(all->size() == 2);
    want = {{"keep.txt", "mode"}, {"new.txt", "D"}};
    CHECK(all->at(1).paths == want);
}

TEST_CASE("steps: the flattened upper is what one upper would hold", "[steps]") {
    testtree::TempDir t;
    std::string s = t.path;
    testtree::make(s + "/steps", "dir");
    std::string l1 = s + "/steps/0001", l2 = s + "/steps/0002", up = s + "/upper";
    for (const auto& d : {l1, l2, up}) testtree::make(d, "dir");
    // merged dir: children from every layer
    testtree::make(l1 + "/d", "dir");
    testtree::make(l1 + "/d/one", "file:1");
    testtree::make(up + "/d", "dir");
    testtree::make(up + "/d/two", "file:2");
    ::chmod((up + "/d").c_str(), 0711);
    // made, then deleted: the whiteout stays (capture drops it when the target lacks the name)
    testtree::make(l1 + "/tmp", "file:t");
    testtree::make(l2 + "/tmp", "whiteout");
    // removed in step 2, remade live: opaque, only the live child
    testtree::make(l1 + "/o", "dir");
    testtree::make(l1 + "/o/old", "file:o");
    testtree::make(l2 + "/o", "whiteout");
    testtree::make(up + "/o", "dir");
    testtree::make(up + "/o/new", "file:n");
    // opaque in step 2 over step 1's content
    testtree::make(l1 + "/p", "dir");
    testtree::make(l1 + "/p/hidden", "file:h");
    testtree::make(l2 + "/p", "opaque");
    testtree::make(l2 + "/p/shown", "file:s");
    // a later step's file wins
    testtree::make(l1 + "/f", "file:old");
    testtree::make(up + "/f", "file:new");
    testtree::make(l2 + "/ln", "symlink:f");
    auto flat = steps::flatten(s);
    REQUIRE(flat.ok());
    const std::string& f = flat.value();
    CHECK(testtree::read_text(f + "/d/one") == "1");
    CHECK(testtree::read_text(f + "/d/two") == "2");
    CHECK(xattr(f + "/d", "user.overlay.opaque").empty());
    struct stat st;
    REQUIRE(::stat((f + "/d").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0711);
    CHECK(whiteout(f + "/tmp"));
    CHECK(xattr(f + "/o", "user.overlay.opaque") == "y");
    CHECK(testtree::read_text(f + "/o/new") == "n");
    CHECK_FALSE(exists(f + "/o/old"));
    CHECK(xattr(f + "/p", "user.overlay.opaque") == "y");
    CHECK(testtree::read_text(f + "/p/shown") == "s");
    CHECK_FALSE(exists(f + "/p/hidden"));
    CHECK(testtree::read_text(f + "/f") == "new");
    char buf[8];
    CHECK(::readlink((f + "/ln").c_str(), buf, sizeof buf) == 1);
    // Files are linked, not copied: the layers' bytes are shared.
    struct stat a, b;
    REQUIRE(::stat((f + "/d/one").c_str(), &a) == 0);
    REQUIRE(::stat((l1 + "/d/one").c_str(), &b) == 0);
    CHECK(a.st_ino == b.st_ino);
    steps::remove_flat(f);
    CHECK_FALSE(exists(f));
    CHECK(testtree::read_text(l1 + "/d/one") == "1");
}

TEST_CASE("overlay: a stack of lower layers joins escaped paths topmost first", "[steps]") {
    CHECK(
        overlay::overlay_options(std::vector<std::string>{"/proc/self/fd/7", "/proc/self/fd/6", "/a:b"}, "/u", "/w") ==
        "lowerdir=/proc/self/fd/7:/proc/self/fd/6:/a\\:b,upperdir=/u,workdir=/w,"
        "userxattr,volatile");
}

TEST_CASE("steps: past the depth limit, the oldest two steps are squashed into one layer", "[steps]") {
    testtree::TempDir t;
    std::string s = t.path;
    testtree::make(s + "/steps", "dir");
    char name[16];
    for (int i = 1; i <= steps::kMaxDepth; i++) {
        std::snprintf(name, sizeof name, "/steps/%04d", i);
        testtree::make(s + name, "dir");
    }
    testtree::make(s + "/steps/0001/a", "file:one");
    testtree::make(s + "/steps/0001/gone", "file:old");
    testtree::make(s + "/steps/0002/b", "file:two");
    testtree::make(s + "/steps/0002/a", "file:one again");
    testtree::make(s + "/upper", "dir");
    testtree::make(s + "/upper/f", "file:x");
    auto n = steps::freeze_live(s, s + "/steps/0001", "2026-11-25T20:00:00Z");
    REQUIRE(n.ok());
    CHECK(n.value() == steps::kMaxDepth + 1);
    // Steps 1 and 2 are one layer in step 2's slot, the upper over the lower.
    CHECK(::access((s + "/steps/0001").c_str(), F_OK) != 0);
    CHECK(testtree::read_text(s + "/steps/0002/a") == "one again");
    CHECK(testtree::read_text(s + "/steps/0002/b") == "two");
    CHECK(testtree::read_text(s + "/steps/0002/gone") == "old");
    CHECK(testtree::read_text(s + "/steps/0065/f") == "x");
    auto c = steps::count(s);
    REQUIRE(c.ok());
    CHECK(c.value() == steps::kMaxDepth + 1);
    auto first = steps::first_layer(s);
    REQUIRE(first.ok());
    CHECK(first.value() == 2);
    auto recs = steps::read_all(s);
    REQUIRE(recs.ok());
    REQUIRE(recs->size() == static_cast<size_t>(steps::kMaxDepth + 1));
    CHECK(recs->front().squashed);
    CHECK_FALSE((*recs)[1].squashed);
    // Out of reach for a rollback or a fork; step 2 and the real tree are not.
    CHECK_FALSE(steps::check_reachable(s, 1).ok());
    CHECK(steps::check_reachable(s, 2).ok());
    CHECK(steps::check_reachable(s, 0).ok());
}

TEST_CASE("steps: a layer begins with its step, the first layer after a squash with the earliest it holds", "[steps]") {
    testtree::TempDir t;
    std::string s = t.path;
    testtree::make(s + "/steps", "dir");
    const char* starts[] = {"2026-11-25T20:00:01Z", "2026-11-25T20:00:05Z", "2026-11-25T20:00:09Z"};
    for (int i = 1; i <= 3; i++) {
        char name[16];
        std::snprintf(name, sizeof name, "/steps/%04d", i);
        testtree::make(s + name, "dir");
        testtree::make(s + name + "/f" + std::to_string(i), "file:x");
        steps::Record r;
        r.n = i;
        r.start = starts[i - 1];
        r.end = starts[i - 1];
        REQUIRE(steps::write_record(s, r).ok());
    }
    REQUIRE(steps::write_live(s, {"run", "2026-11-25T20:00:12Z", ""}).ok());
    auto start = [&](int n) {
        auto r = steps::layer_start(s, n);
        return r.ok() ? r.value() : std::string();  // unknown: layer_starts uses the session's start
    };
    CHECK(start(0) == "2026-11-25T20:00:12Z");
    CHECK(start(1) == starts[0]);
    CHECK(start(2) == starts[1]);
    // Steps 1 and 2 squashed into step 2's slot: that layer holds step 1's copies.
    REQUIRE(steps::squash_oldest(s).ok());
    CHECK(start(2) == starts[0]);
    CHECK(start(3) == starts[2]);
    // A squashed step's start unknown: so is the layer's (the session's start is used).
    std::FILE* f = std::fopen((s + "/steps/0001.json").c_str(), "w");
    REQUIRE(f);
    std::fputs("{", f);
    std::fclose(f);
    CHECK(start(2).empty());
}
