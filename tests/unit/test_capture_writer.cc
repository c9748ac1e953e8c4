// The writer never produces a patch its reader refuses: a file whose hole map
// has more data segments than the reader's limit is stored with its smallest
// holes as zeros, its content and the base fingerprints unchanged.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "capture/patch/reader.h"
#include "capture/patch/writer.h"
#include "capture/scan/entry/fingerprint.h"
#include "helper/base/fd.h"
#include "tests/unit/capture_scan_util.h"
#include "tests/unit/capture_tree.h"

using namespace capture;

TEST_CASE("capture writer: fit_segments closes the smallest holes first, ties in file order") {
    Segments s = {{0, 1}, {10, 1}, {12, 1}, {100, 1}, {103, 1}};  // holes 9, 1, 87, 2
    Segments fit = s;
    fit_segments(&fit, 3);
    CHECK(fit == Segments{{0, 1}, {10, 3}, {100, 4}});
    fit = s;
    fit_segments(&fit, 5);
    CHECK(fit == s);
    fit = s;
    fit_segments(&fit, 0);  // at least one segment: everything from the first data to the last
    CHECK(fit == Segments{{0, 104}});
    Segments ties = {{0, 1}, {2, 1}, {4, 1}, {6, 1}};  // holes 1, 1, 1
    fit_segments(&ties, 2);
    CHECK(ties == Segments{{0, 5}, {6, 1}});
}

namespace {

// A file of `size` bytes with one byte of data every `stride` bytes (the
// byte differs by `salt`), the rest holes.
void holey(const std::string& path, int count, uint64_t stride, uint64_t size, char salt) {
    base::Fd f(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    REQUIRE(f.valid());
    for (int i = 0; i < count; i++) {
        char c = static_cast<char>('a' + (i + salt) % 26);
        REQUIRE(::pwrite(f.get(), &c, 1, static_cast<off_t>(i * stride)) == 1);
    }
    REQUIRE(::ftruncate(f.get(), static_cast<off_t>(size)) == 0);
}

size_t segments_of(const std::string& path, uint64_t size) {
    base::Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    auto s = data_segments(f.get(), size);
    REQUIRE(s.ok());
    return s->size();
}

}  // namespace

TEST_CASE("capture writer: a file with more data segments than the reader's limit saves and reopens") {
    testtree::TempDir t;
    std::string up = t.path + "/up", low = t.path + "/low";
    ::mkdir(up.c_str(), 0755);
    ::mkdir(low.c_str(), 0755);
    // 64 one-byte segments, 64 KiB apart, and a trailing hole; the real file
    // (the base) has its own 48-segment map.
    const uint64_t stride = 64 << 10, size = 64 * stride + 12345;
    holey(up + "/holey", 64, stride, size, 0);
    holey(low + "/holey", 48, stride, size, 7);
    INFO("this test needs a filesystem that reports holes (SEEK_DATA/SEEK_HOLE) under " << t.path);
    REQUIRE(segments_of(up + "/holey", size) == 64);
    REQUIRE(segments_of(low + "/holey", size) == 48);

    auto scan = scan_dirs(up, low);
    Manifest m;
    m.format = "layover-patch/1";
    m.target = low;
    for (const auto& it : scan.items) m.changes.push_back(it.change);
    m.base = scan.base;
    REQUIRE(m.changes.size() == 1);
    CHECK(m.changes[0].kind == Kind::Modified);
    std::string f = t.path + "/p.tar.zst";
    WriteOptions opts;
    opts.max_sparse_segments = 10;
    {
        base::Fd out(::open(f.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        base::Fd upfd(::open(up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        auto w = write_patch(out.get(), m, scan.items, upfd.get(), opts);
        INFO((w ? "" : w.error().message));
        REQUIRE(w.ok());
    }
    Limits l;
    l.max_sparse_segments = 10;
    auto p = Patch::open(f, l);
    INFO((p ? "" : p.error().message));
    REQUIRE(p.ok());
    REQUIRE(p->members().size() == 1);
    const Member& mem = p->members()[0];
    CHECK(mem.size == size);
    CHECK_FALSE(mem.sparse.empty());
    CHECK(mem.sparse.size() <= 10);
    // The content is exactly the upper file's, holes and all.
    auto data = p->read_file("holey", size + 1);
    REQUIRE(data.ok());
    std::string want(size, '\0');
    {
        base::Fd in(::open((up + "/holey").c_str(), O_RDONLY | O_CLOEXEC));
        REQUIRE(::pread(in.get(), want.data(), size, 0) == static_cast<ssize_t>(size));
    }
    CHECK(*data == want);
    // The base record still fingerprints the real file's own map, as review's
    // conflict check does, untouched by how the new content was stored.
    REQUIRE(p->manifest().base.size() == 1);
    base::Fd real(::open((low + "/holey").c_str(), O_RDONLY | O_CLOEXEC));
    CHECK(p->manifest().base[0].fingerprint == fingerprint_fd(real.get(), size).value());
    // With the default limit the writer keeps every segment.
    std::string g = t.path + "/q.tar.zst";
    {
        base::Fd out(::open(g.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        base::Fd upfd(::open(up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        REQUIRE(write_patch(out.get(), m, scan.items, upfd.get()).ok());
    }
    auto q = Patch::open(g);
    REQUIRE(q.ok());
    CHECK(q->members()[0].sparse.size() == 64);
    CHECK_FALSE(Patch::open(g, l).ok());  // what a patch over the limit would meet
}

TEST_CASE("capture fingerprint: the text flag save's originals use (dense, no NUL in the first kTextProbe bytes)") {
    testtree::TempDir t;
    auto flag = [&](const std::string& name, const std::string& data, uint64_t hole_at = 0) {
        std::string f = t.path + "/" + name;
        base::Fd fd(::open(f.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        REQUIRE(::pwrite(fd.get(), data.data(), data.size(), static_cast<off_t>(hole_at)) ==
                static_cast<ssize_t>(data.size()));
        uint64_t size = hole_at + data.size();
        bool text = false;
        auto fp = fingerprint_fd(fd.get(), size, &text);
        REQUIRE(fp.ok());
        CHECK(*fp == fingerprint_fd(fd.get(), size).value());  // the same fingerprint with or without the flag
        return text;
    };
    std::string lines(20000, 'a');
    CHECK(flag("text", lines));
    CHECK(flag("empty", ""));
    std::string early = lines, late = lines;
    early[100] = '\0';
    late[capture::kTextProbe + 10] = '\0';
    CHECK_FALSE(flag("early-nul", early));
    CHECK(flag("late-nul", late));
    // Data after a hole of 1 MiB: not dense (when the filesystem reports holes).
    std::string f = t.path + "/probe";
    base::Fd probe(::open(f.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    REQUIRE(::pwrite(probe.get(), "x", 1, 1 << 20) == 1);
    if (::lseek(probe.get(), 0, SEEK_DATA) > 0) CHECK_FALSE(flag("sparse", lines, 1 << 20));
}
