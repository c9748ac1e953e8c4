// Members made by threads (capture/patch/writer.cc, chunk_pipe.h): the patch
// is byte for byte the one a single thread writes, the content hook's notes
// come in member order, and a file that vanished or grew since the scan
// fails the write with the same message either way.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "capture/patch/chunk_pipe.h"
#include "capture/patch/reader.h"
#include "capture/patch/writer.h"
#include "capture/scan/entry/fingerprint.h"
#include "helper/base/fd.h"
#include "tests/unit/capture_scan_util.h"
#include "tests/unit/capture_tree.h"

using namespace capture;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// 300 small files (every third modified against a real twin, so it carries
// an original), a 300 KiB file (a chunk of its own), a 5 MiB one (a chunk
// handed over as tar, compressed by the writer's workers), a sparse file, a dir
// with an xattr, a symlink, a fifo, two names of one inode and a deletion:
// several chunks of every kind of member.
void make_trees(const ScanPair& p) {
    for (int i = 0; i < 300; i++) {
        std::string name = "/f" + std::to_string(1000 + i);
        std::string text = "line of file " + std::to_string(i) + "\n";
        if (i % 3 == 0) testtree::make(p.low + name, "file:" + text + "old\n");
        testtree::make(p.up + name, "file:" + text + "new\n");
    }
    testtree::make(p.up + "/big", "file:" + std::string(300 << 10, 'b'));
    std::string huge;
    for (int i = 0; huge.size() < (5 << 20); i++) huge += "huge line " + std::to_string(i) + "\n";
    testtree::make(p.up + "/huge", "file:" + huge);
    base::Fd s(::open((p.up + "/sparse").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    REQUIRE(::pwrite(s.get(), "x", 1, 1 << 20) == 1);
    testtree::make(p.up + "/d", "dir");
    testtree::set_xattr(p.up + "/d", "user.color", "blue");
    testtree::make(p.up + "/d/link", "symlink:../f1000");
    testtree::make(p.up + "/d/pipe", "fifo");
    testtree::make(p.up + "/d/one", "file:linked\n");
    REQUIRE(::link((p.up + "/d/one").c_str(), (p.up + "/d/two").c_str()) == 0);
    testtree::make(p.low + "/gone", "file:bye\n");
    testtree::make(p.up + "/gone", "whiteout");
}

struct Written {
    base::Result<void> result = base::Ok();
    std::string bytes, notes;
};

Written write(const ScanPair& p, const ScanResult& scan, int threads, const std::string& name) {
    Manifest m;
    m.format = "layover-patch/3";
    m.target = p.low;
    for (const auto& it : scan.items) {
        m.changes.push_back(it.change);
        if (it.change.kind != Kind::Modified) continue;
        std::string text = slurp(p.low + "/" + it.change.path);
        m.originals.push_back({fingerprint_bytes(text), text.size()});
    }
    m.base = scan.base;
    WriteOptions wo;
    wo.threads = threads;
    Written w;
    wo.notes = &w.notes;
    wo.original = [&](const Item& it) -> base::Result<std::optional<OriginalContent>> {
        thread_local std::string text;
        if (it.change.kind != Kind::Modified) return std::optional<OriginalContent>();
        text = slurp(p.low + "/" + it.change.path);
        return std::optional<OriginalContent>({text, fingerprint_bytes(text)});
    };
    wo.on_content = [](const Item& it, std::string_view data) {
        return it.change.path + ":" + std::to_string(data.size()) + "\n";
    };
    std::string f = p.t.path + "/" + name;
    {
        base::Fd out(::open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        base::Fd up(::open(p.up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        w.result = write_patch(out.get(), m, scan.items, up.get(), wo);
    }
    w.bytes = slurp(f);
    return w;
}

}  // namespace

TEST_CASE("capture writer: members made by threads give the patch one thread writes, and its errors") {
    ScanPair p;
    make_trees(p);
    auto scan = scan_dirs(p.up, p.low);
    REQUIRE(scan.items.size() > 300);
    Written one = write(p, scan, 0, "one.tar.zst");
    REQUIRE(one.result.ok());
    for (int threads : {1, 3}) {
        INFO("threads " << threads);
        Written many = write(p, scan, threads, "many.tar.zst");
        INFO((many.result ? "" : many.result.error().message));
        REQUIRE(many.result.ok());
        CHECK(many.bytes == one.bytes);
        CHECK(many.notes == one.notes);
    }
    // The notes follow the members: every file stored dense, in walk order.
    std::string want;
    for (const auto& it : scan.items)
        if (it.change.type == Type::File && !it.whiteout && it.change.path != "sparse" && it.change.path != "d/two" &&
            it.change.path != "huge")  // over kWholeMax: read in pieces, no note
            want += it.change.path + ":" + std::to_string(it.change.size) + "\n";
    CHECK(one.notes == want);
    // And the reader takes it: every member, the originals, the hard link.
    auto patch = Patch::open(p.t.path + "/many.tar.zst");
    INFO((patch ? "" : patch.error().message));
    REQUIRE(patch.ok());
    CHECK(patch->members().size() == scan.items.size());
    REQUIRE(patch->manifest().originals.size() == 100);  // f1000, f1003, ... f1297
    CHECK(*patch->original(patch->manifest().originals.back().fingerprint) == "line of file 297\nold\n");
    bool hardlink = false;
    for (const auto& mem : patch->members()) hardlink |= mem.kind == Member::Kind::Hardlink && mem.path == "d/two";
    CHECK(hardlink);
    CHECK(patch->read_file("f1299", 100).value() == "line of file 299\nnew\n");

    // A file that vanished or grew since the scan fails the write with the
    // same message either way (the scan kept no file open: the writer opens
    // each). One late in the walk grows, one vanishes: their chunks are not the first.
    testtree::write_text(p.up + "/f1250", "line of file 250\nnew\nand more\n");
    one = write(p, scan, 0, "one.tar.zst");
    Written many = write(p, scan, 2, "many.tar.zst");
    REQUIRE_FALSE(one.result.ok());
    REQUIRE_FALSE(many.result.ok());
    CHECK(one.result.error().message ==
          "upper entry f1250 changed while the patch was being written (the session is running); try again, or stop "
          "the session first");
    CHECK(many.result.error().message == one.result.error().message);
    REQUIRE(::unlink((p.up + "/f1200").c_str()) == 0);
    one = write(p, scan, 0, "one.tar.zst");
    many = write(p, scan, 2, "many.tar.zst");
    REQUIRE_FALSE(one.result.ok());
    CHECK(one.result.error().message.find("cannot read upper entry f1200: ") == 0);
    CHECK(many.result.error().message == one.result.error().message);
}

TEST_CASE("capture chunk pipe: chunks come out in order, makers stay within the window") {
    const size_t chunks = 40, window = 3;
    ChunkPipe pipe(chunks, window, 64);
    std::atomic<size_t> taking{0};
    std::atomic<bool> too_far{false};
    auto make = [&] {
        size_t k;
        while (pipe.claim(&k)) {
            if (k >= taking.load() + window) too_far = true;
            for (int i = 0; i < 5; i++) {
                ChunkPipe::Piece piece = pipe.buffer(32);
                std::string s = std::to_string(k) + "." + std::to_string(i) + ";";
                std::copy(s.begin(), s.end(), piece.p.get());
                piece.size = s.size();
                if (i == 0) piece.marks.push_back({1, 7, true});
                REQUIRE(pipe.put(k, &piece));
            }
            pipe.done(k);
        }
    };
    std::thread a(make), b(make), c(make);
    std::string got, want;
    size_t groups = 0;
    for (size_t k = 0; k < chunks; k++) {
        taking = k;
        ChunkPipe::Piece piece;
        while (pipe.take(k, &piece)) {
            got.append(piece.p.get(), piece.size);
            for (const auto& m : piece.marks) groups += m.at == 1 && m.bytes == 7 && m.fast;
            pipe.recycle(std::move(piece));
        }
        for (int i = 0; i < 5; i++) want += std::to_string(k) + "." + std::to_string(i) + ";";
    }
    a.join();
    b.join();
    c.join();
    CHECK(got == want);
    CHECK(groups == chunks);
    CHECK_FALSE(too_far);
}

TEST_CASE("capture chunk pipe: a stopped pipe releases makers waiting for room") {
    ChunkPipe pipe(4, 4, 8);
    std::atomic<int> refused{0};
    std::thread t([&] {
        size_t k;
        while (pipe.claim(&k)) {
            for (int i = 0; i < 4; i++) {
                ChunkPipe::Piece piece = pipe.buffer(16);
                piece.size = 16;  // over the cap at once: the second put waits
                if (!pipe.put(k, &piece)) {
                    refused++;
                    return;
                }
            }
            pipe.done(k);
        }
    });
    ChunkPipe::Piece piece;
    REQUIRE(pipe.take(0, &piece));
    CHECK(piece.size == 16);
    pipe.stop();
    t.join();
    CHECK(refused == 1);
}
