// A dir removed and remade (`rm -rf d && recreate`, a revert of a step that
// deleted d): an opaque upper dir over a real dir is compared like a merged
// dir, entry by entry, rather than reported as a replacement.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "capture/scan/entry/classify.h"
#include "capture/scan/entry/gone.h"
#include "tests/unit/capture_scan_util.h"

using namespace capture;

namespace {

std::vector<base::DirEntry> names(std::initializer_list<const char*> ns) {
    std::vector<base::DirEntry> out;
    for (const char* n : ns) out.push_back({n, DT_REG});
    return out;
}

std::string items_of(const ScanResult& r) {
    std::string out;
    for (const auto& it : r.items)
        out += std::string(1, kind_letter(it.change.kind)) + " " + it.change.path + (it.whiteout ? " wh" : "") +
               (it.opaque ? " opq" : "") + "\n";
    return out;
}

std::string base_of(const ScanResult& r) {
    std::string out;
    for (const auto& b : r.base) out += b.path + (b.absent ? " absent" : " " + b.fingerprint) + "\n";
    return out;
}

}  // namespace

TEST_CASE("capture remade: the real names an upper dir lacks, shared out between two halves once each") {
    auto up = names({"b", "d", "f"});
    auto gone = only_below(up, names({"a", "b", "c", "d", "e", "g"}));
    CHECK(gone == std::vector<std::string>{"a", "c", "e", "g"});
    CHECK(only_below(up, {}).empty());
    CHECK(only_below({}, names({"x"})) == std::vector<std::string>{"x"});
    CHECK(gone_span(gone, up, 0, 3) == std::pair<size_t, size_t>{0, 4});
    // halves [0,1) and [1,3): a and c (before d); e and g
    CHECK(gone_span(gone, up, 0, 1) == std::pair<size_t, size_t>{0, 2});
    CHECK(gone_span(gone, up, 1, 3) == std::pair<size_t, size_t>{2, 4});
    // halves [0,2) and [2,3): a, c, e (before f); g
    CHECK(gone_span(gone, up, 0, 2) == std::pair<size_t, size_t>{0, 3});
    CHECK(gone_span(gone, up, 2, 3) == std::pair<size_t, size_t>{3, 4});
    // an empty upper dir: all of them
    std::vector<std::string> all{"x"};
    CHECK(gone_span(all, {}, 0, 0) == std::pair<size_t, size_t>{0, 1});
}

TEST_CASE("capture remade: an opaque dir over a real dir is no change, metadata, or a replacement when unlisted") {
    Side up, low;
    up.type = Type::OpaqueDir;
    up.mode = 0755;
    low.type = Type::Dir;
    low.mode = 0755;
    Verdict v = classify(up, low, [] { return true; });
    CHECK_FALSE(v.is_change);
    CHECK(v.descend);
    CHECK(v.descend_lower);
    CHECK_FALSE(v.opaque_member);
    CHECK_FALSE(v.lower_subtree);
    up.mode = 0700;
    v = classify(up, low, [] { return true; });
    CHECK(v.is_change);
    CHECK(v.kind == Kind::Metadata);
    CHECK(v.descend_lower);
    up.mode = 0755;
    up.xattrs = {{"user.k", "v"}};
    CHECK(classify(up, low, [] { return true; }).kind == Kind::Metadata);
    // A real dir whose entries cannot be listed: replaced whole, as before.
    low.unlisted = true;
    v = classify(up, low, [] { return true; });
    CHECK(v.kind == Kind::OpaqueDir);
    CHECK(v.opaque_member);
    CHECK(v.lower_subtree);
    CHECK_FALSE(v.descend_lower);
}

TEST_CASE("capture remade: rm -rf d and a partial recreate lists only what differs, with one or two threads") {
    ScanPair p;
    for (const char* d : {"/d", "/d/sub", "/d/sub2", "/d/gonedir"}) testtree::make(p.low + d, "dir");
    testtree::make(p.low + "/d/a-gone.txt", "file:a\n");
    testtree::make(p.low + "/d/changed.txt", "file:old\n");
    testtree::make(p.low + "/d/same.txt", "file:same\n");
    testtree::make(p.low + "/d/mode.txt", "file:m\n");
    testtree::make(p.low + "/d/ln", "symlink:same.txt");
    testtree::make(p.low + "/d/gonedir/x", "file:x\n");
    testtree::make(p.low + "/d/sub/keep", "file:k\n");
    testtree::make(p.low + "/d/sub/drop", "file:d\n");
    testtree::make(p.low + "/d/sub2/z-gone", "file:z\n");
    testtree::make(p.low + "/d/zz-gone", "file:zz\n");
    testtree::make(p.low + "/outside.txt", "file:o\n");
    // The remade dir: opaque, a plain dir below it, the same files copied back.
    testtree::make(p.up + "/d", "opaque");
    testtree::make(p.up + "/d/sub", "dir");
    testtree::make(p.up + "/d/sub2", "dir");
    testtree::make(p.up + "/d/changed.txt", "file:new\n");
    testtree::make(p.up + "/d/same.txt", "file:same\n");
    testtree::make(p.up + "/d/mode.txt", "file:m\n");
    ::chmod((p.up + "/d/mode.txt").c_str(), 0600);
    testtree::make(p.up + "/d/ln", "symlink:same.txt");
    testtree::make(p.up + "/d/new.txt", "file:n\n");
    testtree::make(p.up + "/d/sub/keep", "file:k\n");
    ScanOptions o;
    o.with_base = true;
    o.threads = 1;
    ScanResult one = scan_dirs(p.up, p.low, o);
    CHECK(items_of(one) ==
          "D d/a-gone.txt wh\n"
          "M d/changed.txt\n"
          "D d/gonedir wh\n"
          "m d/mode.txt\n"
          "A d/new.txt\n"
          "D d/sub/drop wh\n"
          "D d/sub2/z-gone wh\n"
          "D d/zz-gone wh\n");
    // What apply checks: every deleted real entry (a dir with its subtree),
    // the changed ones, and nothing for what is the same.
    CHECK(has_base(one, "d/gonedir/x"));
    CHECK(has_base(one, "d/a-gone.txt"));
    CHECK(has_base(one, "d/changed.txt"));
    CHECK(base_absent(one, "d/new.txt"));
    CHECK_FALSE(has_base(one, "d/same.txt"));
    CHECK_FALSE(has_base(one, "d"));
    o.threads = 2;
    ScanResult two = scan_dirs(p.up, p.low, o);
    CHECK(items_of(two) == items_of(one));
    CHECK(base_of(two) == base_of(one));
    // The status walk (no base) says the same.
    ScanOptions quick;
    quick.summary_only = true;
    CHECK(items_of(scan_dirs(p.up, p.low, quick)) == items_of(one));
}

TEST_CASE("capture remade: a remade dir identical to the real one is no change at all") {
    ScanPair p;
    testtree::make(p.low + "/d", "dir");
    testtree::make(p.low + "/d/f", "file:f\n");
    testtree::make(p.up + "/d", "opaque");
    testtree::make(p.up + "/d/f", "file:f\n");
    ScanResult r = scan_dirs(p.up, p.low);
    CHECK(r.items.empty());
    CHECK(r.base.empty());
}
