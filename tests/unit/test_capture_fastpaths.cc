// The shortcuts that make status and save fast must not change what they
// report: the d_type-only status walk, the directly written JSON text,
// upper files kept open from the scan for the writer, and the walk split
// over two threads.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>

#include "capture/patch/manifest.h"
#include "capture/patch/reader.h"
#include "capture/patch/writer.h"
#include "capture/scan/walk/scan.h"
#include "helper/base/fd.h"
#include "helper/base/thread.h"
#include "tests/unit/capture_patch_util.h"
#include "tests/unit/capture_tree.h"

using namespace capture;

namespace {

struct Trees {
    testtree::TempDir t;
    std::string up = t.path + "/up", low = t.path + "/low";
    Trees() {
        ::mkdir(up.c_str(), 0755);
        ::mkdir(low.c_str(), 0755);
    }
    // n dirs AT/d0.. in both layers, each with old.txt changed in the upper
    // and `added` new there ("sub/new.txt" makes its dir sub first).
    void changed_dirs(const std::string& at, int n, const std::string& added) {
        for (int i = 0; i < n; i++) {
            std::string d = at + "/d" + std::to_string(i);
            testtree::make(low + d, "dir");
            testtree::make(low + d + "/old.txt", "file:old " + std::to_string(i));
            testtree::make(up + d, "dir");
            testtree::make(up + d + "/old.txt", "file:changed " + std::to_string(i));
            if (size_t slash = added.find('/'); slash != std::string::npos)
                testtree::make(up + d + "/" + added.substr(0, slash), "dir");
            testtree::make(up + d + "/" + added, "file:n");
        }
    }
    ScanResult scan(const ScanOptions& o) {
        base::Fd u(::open(up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        base::Fd l(::open(low.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        auto r = scan_upper(u.get(), l.get(), o);
        INFO((r ? "" : r.error().message));
        REQUIRE(r.ok());
        return std::move(r.value());
    }
    // A deep tree's walk, on a big stack as every walk of the helper runs
    // (capture::as_owner_here): hundreds of levels fill the main thread's
    // 8 MiB under ASan (~12 KB a level).
    ScanResult scan_deep(const ScanOptions& o) {
        base::Result<ScanResult> r = base::error("not walked");
        {
            base::Fd u(::open(up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
            base::Fd l(::open(low.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
            base::StackThread walk;
            REQUIRE(walk.start([&] { r = scan_upper(u.get(), l.get(), o); }));
        }
        INFO((r ? "" : r.error().message));
        REQUIRE(r.ok());
        return std::move(r.value());
    }
};

std::string describe(const Change& c) {
    return c.path + " " + kind_name(c.kind) + " " + type_name(c.type) + " " + type_name(c.old_type) + " ->" +
           c.link_target + (c.captured ? "" : " uncaptured");
}

std::vector<std::string> described(const ScanResult& r) {
    std::vector<std::string> out;
    for (const auto& it : r.items) out.push_back(describe(it.change));
    return out;
}

}  // namespace

TEST_CASE("capture fastpath: the status summary walk reports exactly what the full walk does") {
    Trees tr;
    testtree::make(tr.low + "/kept.txt", "file:same\n");
    testtree::make(tr.up + "/kept.txt", "file:changed\n");
    testtree::make(tr.up + "/new", "dir");
    testtree::make(tr.up + "/new/a.txt", "file:a\n");
    testtree::make(tr.up + "/new/empty", "file:");
    testtree::make(tr.up + "/new/ln", "symlink:" + std::string(300, 't'));  // longer than the first readlink buffer
    testtree::make(tr.up + "/new/pipe", "fifo");
    testtree::make(tr.up + "/new/sock", "socket");
    testtree::make(tr.up + "/new/sub", "opaque");
    testtree::make(tr.up + "/new/sub/deep.txt", "file:deep\n");
    // A dir marked as holding xattr whiteouts: its zero-size whiteout child
    // is no change, and the summary walk must not take it for a new file.
    testtree::make(tr.up + "/new/xw", "dir");
    testtree::set_xattr(tr.up + "/new/xw", "user.overlay.opaque", "x");
    testtree::make(tr.up + "/new/xw/gone", "whiteout");
    testtree::make(tr.up + "/new/xw/real.txt", "file:r\n");

    ScanOptions full;
    ScanOptions quick;
    quick.summary_only = true;
    auto a = described(tr.scan(full));
    auto b = described(tr.scan(quick));
    CHECK(a == b);
    CHECK(std::find(b.begin(), b.end(), "new/xw/gone added file none ->") == b.end());
    CHECK(std::find(b.begin(), b.end(), "new/ln added symlink none ->" + std::string(300, 't')) != b.end());
    CHECK(std::find(b.begin(), b.end(), "new/sock added socket none -> uncaptured") != b.end());
    CHECK(std::find(b.begin(), b.end(), "kept.txt modified file file ->") != b.end());
    CHECK(b.size() == 11);
    // run's exit counts the same walk without keeping the changes.
    ScanOptions count = quick;
    count.count_only = true;
    ScanResult counted = tr.scan(count);
    CHECK(counted.items.empty());
    CHECK(counted.counted == b.size());
}

TEST_CASE("capture fastpath: the walk split over two threads reports exactly what one thread does") {
    Trees tr;
    testtree::make(tr.low + "/top.txt", "file:old\n");
    testtree::make(tr.up + "/top.txt", "file:new\n");
    for (int i = 0; i < 6; i++) {
        std::string d = "/d" + std::to_string(i);
        testtree::make(tr.low + d, "dir");
        testtree::make(tr.low + d + "/real.txt", "file:real " + std::to_string(i));
        testtree::make(tr.low + d + "/gone", "dir");
        testtree::make(tr.low + d + "/gone/inner.txt", "file:inner");
        testtree::make(tr.up + d, "dir");
        testtree::make(tr.up + d + "/new" + std::to_string(i) + ".txt", "file:n" + std::to_string(i));
        testtree::make(tr.up + d + "/real.txt", "whiteout");
        testtree::make(tr.up + d + "/gone", "opaque");  // its real subtree goes to the base
        testtree::make(tr.up + d + "/gone/fresh.txt", "file:fresh");
        testtree::make(tr.up + d + "/link", "symlink:real.txt");
        testtree::make(tr.up + d + "/deep", "dir");
        testtree::make(tr.up + d + "/deep/er", "dir");
        testtree::make(tr.up + d + "/deep/er/leaf.txt", "file:leaf");
    }
    testtree::make(tr.up + "/z.txt", "file:last\n");
    auto base_of = [](const ScanResult& r) {
        std::vector<std::string> out;
        for (const auto& b : r.base)
            out.push_back(b.path + (b.absent ? " absent" : " " + b.fingerprint) + " " + type_name(b.type));
        return out;
    };
    for (bool keep : {false, true}) {
        ScanOptions o;
        o.with_base = true;
        o.keep_files = keep;
        o.threads = 1;
        ScanResult one = tr.scan(o);
        o.threads = 2;
        ScanResult two = tr.scan(o);
        CHECK(described(two) == described(one));
        CHECK(base_of(two) == base_of(one));
        CHECK(two.items.size() == 2 + 6 * 8);  // per dN: 8 changes (dN itself is unchanged)
        // The count split over two threads adds up the pieces' counts.
        ScanOptions c;
        c.summary_only = true;
        c.count_only = true;
        c.threads = 2;
        ScanResult counted = tr.scan(c);
        CHECK(counted.items.empty());
        CHECK(counted.counted == two.items.size());
        // Every kept file's fd is the one its item points at, in walk order.
        size_t kept = 0;
        for (const auto& it : two.items) kept += it.fd.valid();
        if (!keep) CHECK(kept == 0);
        for (const auto& it : two.items) {
            if (!it.fd.valid()) continue;
            struct stat st;
            REQUIRE(::fstat(it.fd.get(), &st) == 0);
            CHECK(static_cast<uint64_t>(st.st_ino) == it.ino);
        }
    }
}

TEST_CASE("capture fastpath: a split inside an opaque dir repeats no base record") {
    // rm -rf proj && git clone ... proj: the upper root holds one opaque dir,
    // so the split falls inside it, after its whole real subtree went to the
    // base; the halves must not add "absent" records for the same paths.
    Trees tr;
    for (const char* d : {"/proj", "/proj/a", "/proj/b", "/proj/c"}) testtree::make(tr.low + d, "dir");
    testtree::make(tr.low + "/proj/a/x.txt", "file:old a");
    testtree::make(tr.low + "/proj/b/y.txt", "file:old b");
    testtree::make(tr.low + "/proj/c/z.txt", "file:old c");
    testtree::make(tr.up + "/proj", "opaque");
    for (const char* d : {"/proj/a", "/proj/b", "/proj/c", "/proj/d"}) testtree::make(tr.up + d, "dir");
    testtree::make(tr.up + "/proj/a/x.txt", "file:new a");
    testtree::make(tr.up + "/proj/b/y.txt", "file:new b");
    testtree::make(tr.up + "/proj/c/z.txt", "file:new c");
    testtree::make(tr.up + "/proj/d/w.txt", "file:new d");
    ScanOptions o;
    o.with_base = true;
    o.threads = 1;
    ScanResult one = tr.scan(o);
    o.threads = 2;
    ScanResult two = tr.scan(o);
    std::vector<std::string> paths;
    for (const auto& b : two.base) paths.push_back(b.path + (b.absent ? " absent" : ""));
    std::vector<std::string> sorted = paths;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end(), [](const std::string& a, const std::string& b) {
              return a.substr(0, a.find(' ')) == b.substr(0, b.find(' '));
          }) == sorted.end());
    std::vector<std::string> want;
    for (const auto& b : one.base) want.push_back(b.path + (b.absent ? " absent" : ""));
    CHECK(paths == want);
    CHECK(described(two) == described(one));
}

TEST_CASE("capture fastpath: the status summary walk still refuses an unsupported overlay marker") {
    Trees tr;
    testtree::make(tr.up + "/new", "dir");
    testtree::make(tr.up + "/new/moved", "dir");
    testtree::set_xattr(tr.up + "/new/moved", "user.overlay.redirect", "/elsewhere");
    ScanOptions quick;
    quick.summary_only = true;
    base::Fd u(::open(tr.up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    base::Fd l(::open(tr.low.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    auto r = scan_upper(u.get(), l.get(), quick);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("user.overlay.redirect") != std::string::npos);
}

TEST_CASE("capture fastpath: the --json text parses to the same objects as change_to_json") {
    std::vector<Change> cs;
    for (std::string p : {std::string("plain.txt"), std::string("q\"uo\\te"), std::string("ctl\x01\x1f\x7f\n\t"),
                          std::string("bad\xff\xfe"), std::string("utf8/\xc3\xa9t\xc3\xa9")}) {
        Change c;
        c.path = p;
        c.kind = Kind::Added;
        c.type = Type::Symlink;
        c.link_target = "to/" + p;
        c.size = 1ull << 40;
        c.mode = 0777;
        cs.push_back(c);
    }
    Change d;
    d.path = "gone";
    d.kind = Kind::Deleted;
    d.old_type = Type::Dir;
    d.old_mode = 0755;
    cs.push_back(d);
    auto parsed = json::parse(changes_to_json_text(cs));
    REQUIRE(parsed.is_array());
    REQUIRE(parsed.size() == cs.size());
    for (size_t i = 0; i < cs.size(); i++) {
        // The --json form adds "risks" (review's marks; none given here: empty).
        REQUIRE(parsed[i].contains("risks"));
        CHECK(parsed[i]["risks"] == json::array());
        parsed[i].erase("risks");
        CHECK(parsed[i] == testpatch::change_to_json(cs[i], false));
        std::string path, link;
        REQUIRE(testpatch::get_bytes(parsed[i], "path", &path));
        CHECK(path == cs[i].path);
        if (cs[i].type == Type::Symlink) {
            REQUIRE(testpatch::get_bytes(parsed[i], "link_target", &link));
            CHECK(link == cs[i].link_target);
        }
    }
    CHECK(changes_to_json_text({}) == "[]\n");
}

TEST_CASE("capture fastpath: files kept open by the scan make the same patch as files opened again") {
    Trees tr;
    testtree::make(tr.low + "/mod.txt", "file:old\n");
    testtree::make(tr.up + "/mod.txt", "file:new content\n");
    testtree::make(tr.up + "/d", "dir");
    testtree::make(tr.up + "/d/a.txt", "file:aaa\n");
    testtree::make(tr.up + "/d/b.txt", "file:bbb\n");
    testtree::set_xattr(tr.up + "/d/b.txt", "user.tag", "v");
    REQUIRE(::link((tr.up + "/d/a.txt").c_str(), (tr.up + "/d/c.txt").c_str()) == 0);
    std::map<bool, std::vector<std::string>> seen;
    for (bool keep : {false, true}) {
        ScanOptions o;
        o.with_base = true;
        o.keep_files = keep;
        ScanResult scan = tr.scan(o);
        size_t kept = 0;
        for (const auto& it : scan.items) kept += it.fd.valid();
        // The fd limit in a test run may leave no budget; either way the patch must match.
        if (!keep) CHECK(kept == 0);
        Manifest m;
        m.format = "layover-patch/1";
        m.target = tr.low;
        for (const auto& it : scan.items) m.changes.push_back(it.change);
        m.base = scan.base;
        std::string f = tr.t.path + (keep ? "/kept.tar.zst" : "/reopened.tar.zst");
        {
            base::Fd out(::open(f.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
            base::Fd upfd(::open(tr.up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
            auto w = write_patch(out.get(), m, scan.items, upfd.get());
            INFO((w ? "" : w.error().message));
            REQUIRE(w.ok());
        }
        // The writer closed each kept file once its member was made.
        for (const auto& it : scan.items) CHECK_FALSE(it.fd.valid());
        auto p = Patch::open(f);
        INFO((p ? "" : p.error().message));
        REQUIRE(p.ok());
        for (const auto& mem : p->members()) {
            std::string data = mem.kind == Member::Kind::File ? p->read_file(mem.path, 1 << 20).value() : "";
            std::string x = mem.xattrs.count("user.tag") ? mem.xattrs.at("user.tag") : "";
            seen[keep].push_back(mem.path + "|" + std::to_string(static_cast<int>(mem.kind)) + "|" + mem.link_target +
                                 "|" + data + "|" + x);
        }
    }
    CHECK(seen[true] == seen[false]);
    CHECK(seen[true].size() == 5);  // mod.txt, d, d/a.txt, d/b.txt, d/c.txt (a hardlink)
}

TEST_CASE("capture fastpath: kept files give their fds back when a deep dir needs them") {
    struct rlimit old;
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &old) == 0);
    if (old.rlim_max < 4200) return;  // the shortcut is off below 4096 anyway
    Trees tr;
    for (int i = 0; i < 2000; i++) testtree::make(tr.up + "/f" + std::to_string(i), "file:x" + std::to_string(i));
    // Two deep dirs: the root is split between two walkers, which may be
    // deep at once; the fds they keep and hold are counted together.
    for (const char* top : {"/y", "/z"}) {
        std::string deep = tr.up + top;
        REQUIRE(::mkdir(deep.c_str(), 0755) == 0);
        for (int i = 1; i < 700; i++) {
            deep += "/d";
            REQUIRE(::mkdir(deep.c_str(), 0755) == 0);
        }
        testtree::make(deep + "/leaf.txt", "file:leaf\n");
    }
    struct rlimit low = old;
    low.rlim_cur = 4200;  // room for 2000 kept files, not for them plus 2 x 700 levels
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
    ScanOptions o;
    o.with_base = true;
    o.keep_files = true;
    ScanResult scan = tr.scan_deep(o);
    ::setrlimit(RLIMIT_NOFILE, &old);
    size_t kept = 0;
    for (const auto& it : scan.items) kept += it.fd.valid();
    CHECK(kept > 0);
    CHECK(kept < 2000);
    CHECK(scan.items.size() == 2000 + 2 * (700 + 1));
    Manifest m;
    m.format = "layover-patch/1";
    m.target = tr.low;
    for (const auto& it : scan.items) m.changes.push_back(it.change);
    m.base = scan.base;
    std::string f = tr.t.path + "/p.tar.zst";
    {
        base::Fd out(::open(f.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        base::Fd upfd(::open(tr.up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        auto w = write_patch(out.get(), m, scan.items, upfd.get());
        INFO((w ? "" : w.error().message));
        REQUIRE(w.ok());
    }
    auto p = Patch::open(f);
    INFO((p ? "" : p.error().message));
    REQUIRE(p.ok());
    CHECK(p->read_file("f1999", 100).value() == "x1999");
    CHECK(p->read_file("f0", 100).value() == "x0");
}

TEST_CASE("capture fastpath: each --json change carries the risks it is given, as strings") {
    Change c;
    c.path = "p/.env";
    c.kind = Kind::Added;
    c.type = Type::File;
    auto parsed = json::parse(changes_to_json_text({c}, [](const Change&) {
        return std::vector<std::string>{"secret: x on line 1 (ghp_\xe2\x80\xa6)", "b\"q"};
    }));
    REQUIRE(parsed.size() == 1);
    CHECK(parsed[0]["risks"] == json::array({"secret: x on line 1 (ghp_\xe2\x80\xa6)", "b\"q"}));
}

TEST_CASE("capture fastpath: an original's real file is kept open for save, and given back like the others") {
    struct rlimit old;
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &old) == 0);
    if (old.rlim_max < 8192) return;  // the shortcut is off below 4096 anyway
    Trees tr;
    for (int i = 0; i < 100; i++) {
        std::string n = "/f" + std::to_string(i);
        testtree::make(tr.low + n, "file:old text " + std::to_string(i) + "\n");
        testtree::make(tr.up + n, "file:new text " + std::to_string(i) + "\n");
    }
    testtree::make(tr.low + "/bin", std::string("file:old\0bin", 12));  // not text: no original, nothing kept
    testtree::make(tr.up + "/bin", "file:new");
    // A deep dir, made a level at a time from the one above (not by path).
    base::Fd level(::open(tr.up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    for (int i = 0; i < 1500; i++) {
        REQUIRE(::mkdirat(level.get(), i ? "d" : "y", 0755) == 0);
        level.reset(::openat(level.get(), i ? "d" : "y", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        REQUIRE(level.get() >= 0);
    }
    level.reset();
    struct rlimit high = old, low = old;
    high.rlim_cur = 8192;  // room for all
    low.rlim_cur = 4200;   // room for 100 files and their 100 bases, not for them and 1,500 levels
    for (bool limited : {false, true}) {
        REQUIRE(::setrlimit(RLIMIT_NOFILE, limited ? &low : &high) == 0);
        ScanOptions o;
        o.with_base = true;
        o.keep_files = true;
        o.keep_base_max = 1 << 20;
        ScanResult scan = tr.scan_deep(o);
        ::setrlimit(RLIMIT_NOFILE, &old);
        size_t fds = 0, bases = 0, texts = 0;
        for (const auto& it : scan.items) {
            fds += it.fd.valid();
            bases += it.base_file.valid();
            texts += it.base_text;
            if (!it.base_file.valid()) continue;
            CHECK(it.base_text);
            char buf[64] = {};
            ssize_t n = ::pread(it.base_file.get(), buf, sizeof buf, 0);
            CHECK(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0) ==
                  "old text " + it.change.path.substr(1) + "\n");
        }
        CHECK(texts == 100);
        if (limited) CHECK(bases < 100);
        else CHECK(bases == 100);
    }
}

// "kind path" of each change, in order, for comparing two scans' lists.
static std::vector<std::string> kind_path_lines(const std::vector<Change>& cs) {
    std::vector<std::string> out;
    for (const auto& c : cs) out.push_back(std::string(kind_name(c.kind)) + " " + c.path);
    return out;
}

TEST_CASE("capture fastpath: status's pieces kept apart give the same changes, in walk order") {
    Trees tr;
    // Split: "top" (the first dir with two or more subdirs); a.txt and z.txt
    // are the first walker's own, before and after the pieces.
    testtree::make(tr.up + "/a.txt", "file:first\n");
    testtree::make(tr.low + "/top", "dir");
    testtree::make(tr.up + "/top", "dir");
    tr.changed_dirs("/top", 5, "sub/new.txt");
    testtree::make(tr.up + "/z.txt", "file:last\n");
    ScanOptions o;
    o.threads = 1;
    ScanResult one = tr.scan(o);
    CHECK(one.pieces.empty());
    auto want = kind_path_lines(take_changes(&one));
    o.threads = 2;
    o.changes_apart = true;
    ScanResult two = tr.scan(o);
    CHECK(!two.pieces.empty());
    CHECK(two.items.size() == 2);  // a.txt and z.txt
    CHECK(kind_path_lines(take_changes(&two)) == want);
    CHECK(want.size() == 2 + 5 * 3);
    CHECK(two.items.empty());
    CHECK(two.pieces.empty());
}

TEST_CASE("capture fastpath: status's pieces split at the root are the list itself, in walk order") {
    Trees tr;
    tr.changed_dirs("", 6, "new.txt");
    ScanOptions o;
    o.threads = 1;
    ScanResult one = tr.scan(o);
    auto want = kind_path_lines(take_changes(&one));
    CHECK(want.size() == 6 * 2);
    o.threads = 2;
    o.changes_apart = true;
    o.changes_hint = 64;
    ScanResult two = tr.scan(o);
    REQUIRE(two.pieces.size() == 1);  // the pieces' changes in one line
    CHECK(two.items.empty());
    CHECK(two.pieces[0].changes.capacity() >= 64);
    const Change* line = two.pieces[0].changes.data();
    auto got = take_changes(&two);
    CHECK(got.data() == line);  // handed on, not moved again
    CHECK(kind_path_lines(got) == want);
    CHECK(two.pieces.empty());
}
