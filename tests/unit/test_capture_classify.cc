// The change model beyond the type matrix: copy-up without change, metadata,
// dir mtimes, overlay xattrs, whiteout forms, fingerprints.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "capture/scan/entry/classify.h"
#include "capture/scan/entry/fingerprint.h"
#include "capture/scan/entry/xattr.h"
#include "helper/base/fd.h"
#include "tests/unit/capture_scan_util.h"
#include "tests/unit/capture_tree.h"

using namespace capture;

namespace {

struct Pair {
    testtree::TempDir t;
    std::string up = t.path + "/up", low = t.path + "/low";
    Pair() {
        ::mkdir(up.c_str(), 0755);
        ::mkdir(low.c_str(), 0755);
    }
    ScanResult scan() { return scan_dirs(up, low); }
};

Side file_side(uint32_t mode, uint64_t size) {
    Side s;
    s.type = Type::File;
    s.mode = mode;
    s.size = size;
    return s;
}

}  // namespace

TEST_CASE("capture classify: a char device 0/0 is a whiteout, other devices are refused") {
    OverlayMarks none;
    CHECK(upper_type(S_IFCHR | 0, 0, 0, none) == Type::Whiteout);
    CHECK(upper_type(S_IFCHR | 0644, (1ull << 32) | 3, 0, none) == Type::Other);
    Side up;
    up.type = upper_type(S_IFCHR, 0, 0, none);
    Side low = file_side(0644, 3);
    Verdict v = classify(up, low, [] { return true; });
    CHECK(v.is_change);
    CHECK(v.kind == Kind::Deleted);
    CHECK(v.whiteout_member);
    up.type = Type::Other;
    CHECK_FALSE(classify(up, low, [] { return true; }).error.empty());
}

TEST_CASE("capture classify: the xattr whiteout form needs a zero-size file") {
    OverlayMarks m;
    m.whiteout = true;
    CHECK(upper_type(S_IFREG | 0644, 0, 0, m) == Type::Whiteout);
    CHECK(upper_type(S_IFREG | 0644, 0, 5, m) == Type::File);
}

TEST_CASE("capture classify: content is compared only for equal sizes") {
    Side u = file_side(0644, 10), l = file_side(0644, 11);
    int calls = 0;
    Verdict v = classify(u, l, [&] {
        calls++;
        return true;
    });
    CHECK(v.kind == Kind::Modified);
    CHECK(calls == 0);
    l.size = 10;
    v = classify(u, l, [&] {
        calls++;
        return true;
    });
    CHECK_FALSE(v.is_change);
    CHECK(calls == 1);
}

TEST_CASE("capture classify: a real device in the lower tree is never replaced") {
    Side u = file_side(0644, 1);
    Side l;
    l.type = Type::Other;
    CHECK_FALSE(classify(u, l, [] { return true; }).error.empty());
}

TEST_CASE("capture scan: a copied-up but unchanged file (touch) is not a change") {
    Pair p;
    testtree::make(p.low + "/f", "file:same\n");
    testtree::make(p.up + "/f", "file:same\n");
    struct timespec ts[2] = {{1, 0}, {1, 0}};
    ::utimensat(AT_FDCWD, (p.up + "/f").c_str(), ts, 0);
    CHECK(p.scan().items.empty());
}

TEST_CASE("capture scan: a mode-only change is metadata, on files and dirs") {
    Pair p;
    testtree::make(p.low + "/f", "file:same\n");
    testtree::make(p.up + "/f", "file:same\n");
    ::chmod((p.up + "/f").c_str(), 0755);
    ::chmod((p.low + "/f").c_str(), 0644);
    testtree::make(p.low + "/d", "dir");
    testtree::make(p.up + "/d", "dir");
    ::chmod((p.up + "/d").c_str(), 0700);
    auto r = p.scan();
    REQUIRE(r.items.size() == 2);
    CHECK(r.items[0].change.path == "d");
    CHECK(r.items[0].change.kind == Kind::Metadata);
    CHECK(r.items[0].change.mode == 0700);
    CHECK(r.items[0].change.old_mode == 0755);
    CHECK(r.items[1].change.kind == Kind::Metadata);
    CHECK(r.items[1].change.mode == 0755);
}

TEST_CASE("capture scan: a dir's mtime alone is never a change") {
    Pair p;
    testtree::make(p.low + "/d", "dir");
    testtree::make(p.up + "/d", "dir");
    struct timespec ts[2] = {{1, 0}, {1, 0}};
    ::utimensat(AT_FDCWD, (p.up + "/d").c_str(), ts, 0);
    CHECK(p.scan().items.empty());
}

TEST_CASE("capture scan: a user xattr change is metadata; overlay xattrs are not") {
    Pair p;
    testtree::make(p.low + "/f", "file:same\n");
    testtree::make(p.up + "/f", "file:same\n");
    testtree::set_xattr(p.up + "/f", "user.overlay.origin", "x");
    testtree::set_xattr(p.up + "/f", "user.overlay.impure", "y");
    CHECK(p.scan().items.empty());
    testtree::set_xattr(p.up + "/f", "user.tag", "blue");
    auto r = p.scan();
    REQUIRE(r.items.size() == 1);
    CHECK(r.items[0].change.kind == Kind::Metadata);
    CHECK(r.items[0].change.xattrs.at("user.tag") == "blue");
    CHECK(r.items[0].change.xattrs.count("user.overlay.origin") == 0);
}

TEST_CASE("capture xattrs: user.overlay.overlay.X is the user's own user.overlay.X") {
    Xattrs raw = {{"user.overlay.overlay.mine", "1"}, {"user.overlay.opaque", "y"}, {"user.a", "2"},
                  {"trusted.overlay.opaque", "y"},    {"security.selinux", "ctx"},  {"system.posix_acl_access", "x"}};
    Xattrs up = user_xattrs(raw, true);
    CHECK(up.size() == 2);
    CHECK(up.at("user.overlay.mine") == "1");
    CHECK(up.at("user.a") == "2");
    OverlayMarks m = overlay_marks(raw);
    CHECK(m.opaque);
    CHECK_FALSE(m.whiteout);
    // A lower (real) file was never written through the overlay: nothing to unescape.
    CHECK(user_xattrs(raw, false).size() == 1);
    CHECK(overlay_marks({{"user.overlay.opaque", "x"}}).opaque == false);
    CHECK_FALSE(overlay_marks({{"user.overlay.redirect", "/a"}}).unsupported.empty());
}

TEST_CASE("capture xattrs: Linux's name, value and list limits, each named when passed") {
    // At every limit: fine. The list counts each name with its NUL.
    Xattrs at = {{"user." + std::string(kXattrNameMax - 5, 'n'), std::string(kXattrSizeMax, 'v')}};
    CHECK(xattr_limit_problem(at).empty());
    Xattrs name = {{"user." + std::string(kXattrNameMax - 4, 'n'), "1"}};
    CHECK_THAT(xattr_limit_problem(name), Catch::Contains("256 bytes long; Linux allows 255 (XATTR_NAME_MAX)"));
    Xattrs value = {{"user.big\x1b", std::string(kXattrSizeMax + 1, 'v')}};
    std::string why = xattr_limit_problem(value);
    CHECK_THAT(why, Catch::Contains("holds 65,537 bytes; Linux allows 65,536 per value (XATTR_SIZE_MAX)"));
    CHECK(why.find('\x1b') == std::string::npos);  // the name shown escaped
    Xattrs many, full;
    for (int i = 0; i < 10000; i++) many["user.x" + std::to_string(100000 + i)] = "";  // 13 bytes each with NUL
    CHECK_THAT(
        xattr_limit_problem(many),
        Catch::Contains("10,000 xattrs whose names take 130,000 bytes; Linux allows 65,536 per file (XATTR_LIST_MAX)"));
    for (int i = 0; i < 65536 / 16; i++) full["user.x" + std::to_string(100000000 + i)] = "";  // 16 bytes each
    CHECK(xattr_limit_problem(full).empty());
    full["user.y"] = "";
    CHECK_THAT(xattr_limit_problem(full), Catch::Contains("XATTR_LIST_MAX"));
}

TEST_CASE("capture scan: a deleted dir's base lists its whole subtree with fingerprints") {
    Pair p;
    testtree::make(p.low + "/d", "dir");
    testtree::make(p.low + "/d/sub", "dir");
    testtree::make(p.low + "/d/sub/deep.txt", "file:deep\n");
    testtree::make(p.low + "/d/ln", "symlink:sub");
    testtree::make(p.up + "/d", "whiteout");
    auto r = p.scan();
    REQUIRE(r.items.size() == 1);
    CHECK(r.items[0].change.kind == Kind::Deleted);
    CHECK(r.items[0].change.old_type == Type::Dir);
    bool deep = false, ln = false;
    for (const auto& b : r.base) {
        if (b.path == "d/sub/deep.txt") deep = b.fingerprint == fingerprint_bytes("deep\n") && b.size == 5;
        if (b.path == "d/ln") ln = b.fingerprint == fingerprint_bytes("sub");
    }
    CHECK(deep);
    CHECK(ln);
}

TEST_CASE("capture scan: a real file changed after copy-up is stale, one before is not") {
    Pair p;
    testtree::make(p.low + "/h", "file:original\n");
    ::usleep(20000);
    testtree::make(p.up + "/h", "file:copied up later\n");
    testtree::make(p.up + "/f", "file:copied\n");
    // The upper entry's birth time is its copy-up; a real ctime after it is stale.
    ::usleep(20000);
    testtree::make(p.low + "/f", "file:edited later\n");
    auto r = p.scan();
    int seen = 0;
    for (const auto& b : r.base) {
        if (b.path == "f") {
            CHECK(b.stale);
            seen++;
        }
        if (b.path == "h") {
            CHECK_FALSE(b.stale);
            seen++;
        }
    }
    CHECK(seen == 2);
}

TEST_CASE("capture fingerprint: holes are part of the map, not hashed as zeros") {
    testtree::TempDir t;
    std::string a = t.path + "/a", b = t.path + "/b";
    {
        base::Fd fa(::open(a.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
        REQUIRE(::pwrite(fa.get(), "x", 1, 1 << 20) == 1);
        REQUIRE(::ftruncate(fa.get(), 4 << 20) == 0);
    }
    base::Fd fa(::open(a.c_str(), O_RDONLY | O_CLOEXEC));
    auto segs = data_segments(fa.get(), 4 << 20);
    REQUIRE(segs.ok());
    REQUIRE(segs->size() == 1);
    CHECK(segs.value()[0].first <= (1u << 20));
    auto f1 = fingerprint_fd(fa.get(), 4 << 20);
    REQUIRE(f1.ok());
    CHECK(f1->size() == 32);
    // Same content written densely compares equal byte for byte.
    std::string dense(4 << 20, '\0');
    dense[1 << 20] = 'x';
    testtree::write_text(b, dense);
    base::Fd fb(::open(b.c_str(), O_RDONLY | O_CLOEXEC));
    auto same = same_content(fa.get(), fb.get(), 4 << 20);
    REQUIRE(same.ok());
    CHECK(same.value());
    dense[3 << 20] = 'y';
    testtree::write_text(b, dense);
    base::Fd fb2(::open(b.c_str(), O_RDONLY | O_CLOEXEC));
    CHECK_FALSE(same_content(fa.get(), fb2.get(), 4 << 20).value());
}

TEST_CASE("capture fingerprint: chunking does not change the result") {
    Fingerprint a, b;
    a.data(0, "hello world", 11);
    b.data(0, "hello ", 6);
    b.data(6, "world", 5);
    CHECK(a.finish(11) == b.finish(11));
    CHECK(fingerprint_bytes("a") != fingerprint_bytes("b"));
    Fingerprint c;
    c.data(100, "hello world", 11);  // same bytes at another offset: another file
    CHECK(c.finish(111) != fingerprint_bytes("hello world"));
}

TEST_CASE("capture classify: the device row and column of the type grid") {
    auto side = [](Type t) {
        Side s;
        s.type = t;
        s.mode = 0644;
        return s;
    };
    auto never = [] { return false; };
    const Type lowers[] = {Type::None, Type::File, Type::Dir, Type::Symlink, Type::Fifo, Type::Socket, Type::Other};
    // case: upper=device lower=none      case: upper=device lower=file
    // case: upper=device lower=dir       case: upper=device lower=symlink
    // case: upper=device lower=fifo      case: upper=device lower=socket
    // case: upper=device lower=device
    for (Type l : lowers) {
        Verdict v = classify(side(Type::Other), side(l), never);
        CHECK(v.error.find("device node") != std::string::npos);
    }
    // case: upper=file lower=device      case: upper=dir lower=device
    // case: upper=opaque lower=device    case: upper=symlink lower=device
    // case: upper=fifo lower=device      case: upper=socket lower=device
    for (Type u : {Type::File, Type::Dir, Type::OpaqueDir, Type::Symlink, Type::Fifo, Type::Socket}) {
        Verdict v = classify(side(u), side(Type::Other), never);
        CHECK(v.error == "the real entry is a device node, which layover never replaces");
    }
    // case: upper=whiteout lower=device
    Verdict w = classify(side(Type::Whiteout), side(Type::Other), never);
    CHECK(w.error.empty());
    CHECK(w.kind == Kind::Deleted);
}
