// zstd framing of patches: the writer cuts frames, the frame walker finds
// their ends without decoding, and the reader decodes them (in parallel)
// back into the exact stream, with every error where a single decoder
// would report it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "capture/patch/zframe.h"
#include "capture/patch/zstream.h"
#include "helper/base/fd.h"
#include "tests/unit/capture_tree.h"

using capture::ZstdReader;
using capture::ZstdWriter;

namespace {

std::string text_data(size_t n, uint32_t seed) {
    std::string d(n, '\0');
    for (auto& c : d) {
        seed = seed * 1103515245u + 12345u;
        c = static_cast<char>('a' + (seed >> 16) % 16);
    }
    return d;
}

std::string frame(const std::string& raw, bool checksum = true, int level = 1, bool content_size = true) {
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum ? 1 : 0);
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, content_size ? 1 : 0);
    std::string out(ZSTD_compressBound(raw.size()), '\0');
    size_t n = ZSTD_compress2(c, out.data(), out.size(), raw.data(), raw.size());
    ZSTD_freeCCtx(c);
    if (ZSTD_isError(n)) throw std::runtime_error("zstd");
    out.resize(n);
    return out;
}

std::string put(const testtree::TempDir& t, const std::string& bytes) {
    std::string f = t.path + "/z.zst";
    FILE* fp = std::fopen(f.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), fp);
    std::fclose(fp);
    return f;
}

std::string slurp(const std::string& f) {
    std::string s;
    FILE* fp = std::fopen(f.c_str(), "rb");
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, fp)) > 0) s.append(buf, n);
    std::fclose(fp);
    return s;
}

// Everything the reader hands out, then its error ("" at a clean end).
std::pair<std::string, std::string> read_all(int fd, int threads) {
    ::lseek(fd, 0, SEEK_SET);
    ZstdReader z(fd, threads);
    std::string out;
    for (;;) {
        auto r = z.next();
        if (!r) return {out, r.error().message};
        if (r->second == 0) break;
        out.append(r->first, r->second);
    }
    CHECK(z.total_out() == out.size());
    return {out, ""};
}

std::pair<std::string, std::string> read_file(const std::string& f, int threads) {
    base::Fd fd(::open(f.c_str(), O_RDONLY | O_CLOEXEC));
    return read_all(fd.get(), threads);
}

// The frame ends found by walking, from the start to the end of the bytes.
std::vector<uint64_t> walk(const std::string& bytes) {
    std::vector<uint64_t> ends;
    auto rd = [&](uint64_t off, unsigned char* p, size_t n) {
        if (off > bytes.size() || bytes.size() - off < n) return false;
        std::copy(bytes.data() + off, bytes.data() + off + n, p);
        return true;
    };
    uint64_t at = 0;
    while (at < bytes.size()) {
        auto e = capture::frame_end(rd, at, bytes.size());
        if (!e) break;
        ends.push_back(*e);
        at = *e;
    }
    return ends;
}

}  // namespace

TEST_CASE("zstd frames: the walk finds every frame's end, as libzstd does, for every block kind") {
    std::vector<std::string> raws = {
        "",                          // an empty frame
        "x",                         // single segment, 1-byte content size
        std::string(3 << 20, '\0'),  // RLE blocks
        text_data(300000, 1),        // compressed blocks
    };
    std::string rnd(200000, '\0');
    uint64_t s = 88172645463325252ull;
    for (auto& c : rnd) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        c = static_cast<char>(s);
    }
    raws.push_back(rnd);  // raw (stored) blocks
    std::string all;
    std::vector<uint64_t> want;
    for (size_t i = 0; i < raws.size(); i++) {
        for (bool cs : {true, false}) {
            std::string f = frame(raws[i], true, i % 2 ? 3 : 1, cs);
            size_t libzstd = ZSTD_findFrameCompressedSize(f.data(), f.size());
            REQUIRE_FALSE(ZSTD_isError(libzstd));
            CHECK(walk(f) == std::vector<uint64_t>{libzstd});
            all += f;
            want.push_back(all.size());
        }
    }
    CHECK(walk(all) == want);
    // Cut anywhere inside the last frame: that frame is not walkable.
    for (size_t cut : {size_t{1}, size_t{4}, size_t{5000}}) {
        std::string shortened = all.substr(0, all.size() - cut);
        auto got = walk(shortened);
        CHECK(got.size() == want.size() - 1);
    }
}

TEST_CASE("zstd frames: what a frame start may not be") {
    std::string ok = frame("abc");
    auto u = [](const std::string& s) { return reinterpret_cast<const unsigned char*>(s.data()); };
    CHECK(capture::frame_start_problem(u(ok), ok.size()) == "");
    CHECK(capture::frame_start_problem(u(ok), 4).find("truncated") != std::string::npos);
    std::string nosum = frame("abc", false);
    CHECK(capture::frame_start_problem(u(nosum), nosum.size()).find("checksum") != std::string::npos);
    std::string skip = std::string("\x50\x2a\x4d\x18\x00\x00\x00\x00", 8);
    CHECK(capture::frame_start_problem(u(skip), skip.size()).find("skippable") != std::string::npos);
    std::string junk = "hello world";
    CHECK(capture::frame_start_problem(u(junk), junk.size()).find("magic") != std::string::npos);
    // A reserved bit in the descriptor, or a reserved block type: not walkable.
    std::string bad = ok;
    bad[4] = static_cast<char>(bad[4] | 0x08);
    CHECK(capture::frame_header_size(u(bad)) == 0);
    CHECK(walk(bad).empty());
    size_t hs = capture::frame_header_size(u(ok));
    REQUIRE(hs > 0);
    bad = ok;
    bad[hs] = static_cast<char>(bad[hs] | 0x06);  // block type 3
    CHECK(capture::block_header(u(bad) + hs).type == 3);
    CHECK(walk(bad).empty());
}

TEST_CASE("zstd writer: frames of kFrameBytes, each checksummed and whole, with or without threads") {
    std::string data = text_data(2 * capture::kFrameBytes + 12345, 7);
    for (int threads : {0, 1, 3}) {
        testtree::TempDir t;
        std::string f = t.path + "/w.zst";
        {
            base::Fd fd(::open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
            ZstdWriter w(fd.get(), 1, threads);
            // Odd-sized writes straddle the frame boundaries.
            for (size_t at = 0; at < data.size(); at += 999999)
                REQUIRE(w.write(data.data() + at, std::min<size_t>(999999, data.size() - at)).ok());
            REQUIRE(w.finish().ok());
        }
        std::string z = slurp(f);
        auto ends = walk(z);
        REQUIRE(ends.size() == 3);
        CHECK(ends.back() == z.size());
        uint64_t at = 0;
        std::string back;
        for (auto e : ends) {
            auto u = reinterpret_cast<const unsigned char*>(z.data() + at);
            CHECK(capture::frame_start_problem(u, e - at) == "");
            std::string piece(capture::kFrameBytes, '\0');
            size_t n = ZSTD_decompress(piece.data(), piece.size(), z.data() + at, e - at);  // alone
            REQUIRE_FALSE(ZSTD_isError(n));
            back.append(piece.data(), n);
            at = e;
        }
        CHECK(back == data);
        CHECK(read_file(f, threads).first == data);
    }
    // Nothing written: still one (empty) frame, which reads back as nothing.
    testtree::TempDir t;
    std::string f = t.path + "/e.zst";
    {
        base::Fd fd(::open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        ZstdWriter w(fd.get());
        REQUIRE(w.finish().ok());
    }
    CHECK(walk(slurp(f)).size() == 1);
}

TEST_CASE("zstd writer: flushed to the disk as written, the file reads back whole") {
    // Incompressible, so several flush steps of output: flushes run beside
    // the writes and the last frames, and finish waits for them.
    std::string data(7 * capture::kFrameBytes + 4321, '\0');
    uint64_t x = 88172645463325252ull;
    for (auto& c : data) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        c = static_cast<char>(x);
    }
    for (int threads : {0, 2}) {
        testtree::TempDir t;
        std::string f = t.path + "/d.zst";
        {
            base::Fd fd(::open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
            ZstdWriter w(fd.get(), 1, threads);
            w.flush_as_written();
            for (size_t at = 0; at < data.size(); at += 300000)
                REQUIRE(w.write(data.data() + at, std::min<size_t>(300000, data.size() - at)).ok());
            REQUIRE(w.finish().ok());
        }
        std::string z = slurp(f);
        CHECK(z.size() > data.size());
        CHECK(walk(z).size() == 8);
        CHECK(read_file(f, threads).first == data);
    }
}

TEST_CASE("zstd writer: group cuts a half-full frame before bytes that belong together, fast frames read back") {
    // 600 KiB, then a group of 300 KiB + its near copy: the copy lands in the
    // original's frame, which compresses it against the original.
    std::string head = text_data(600 << 10, 11), orig = text_data(300 << 10, 12), now = orig;
    now[1000] = 'X';
    std::string tail = text_data(capture::kFrameBytes, 13);
    for (int threads : {0, 2}) {
        testtree::TempDir t;
        std::string f = t.path + "/g.zst";
        {
            base::Fd fd(::open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
            ZstdWriter w(fd.get(), 1, threads);
            REQUIRE(w.write(head.data(), head.size()).ok());
            REQUIRE(w.group(orig.size() + now.size(), true).ok());
            REQUIRE(w.write(orig.data(), orig.size()).ok());
            REQUIRE(w.write(now.data(), now.size()).ok());
            REQUIRE(w.group(100, false).ok());  // fits: no cut
            REQUIRE(w.write(tail.data(), tail.size()).ok());
            REQUIRE(w.finish().ok());
        }
        std::string z = slurp(f);
        auto ends = walk(z);
        REQUIRE(ends.size() == 3);  // head | orig now tail... | rest of tail
        auto u = reinterpret_cast<const unsigned char*>(z.data());
        CHECK(ZSTD_getFrameContentSize(u, ends[0]) == head.size());
        CHECK(ZSTD_getFrameContentSize(u + ends[0], ends[1] - ends[0]) == capture::kFrameBytes);
        CHECK(read_file(f, threads).first == head + orig + now + tail);
        // The near copy costs next to nothing in the original's frame.
        std::string rest = tail.substr(0, capture::kFrameBytes - orig.size() - now.size());
        CHECK(ends[1] - ends[0] < frame(orig).size() + frame(rest).size() + 4096);
    }
}

TEST_CASE("zstd reader: any framing reads back byte-exact with 0, 1, 2 or 4 threads") {
    std::string big = text_data(9 << 20, 3);
    std::vector<std::pair<std::string, std::string>> streams;  // (compressed, plain)
    streams.push_back({frame(big), big});                      // one large frame
    std::string many, many_plain;
    for (int i = 0; i < 700; i++) {
        std::string p = text_data(static_cast<size_t>(i % 13) * 37, static_cast<uint32_t>(i));
        many += frame(p);
        many_plain += p;
    }
    streams.push_back({many, many_plain});  // hundreds of tiny frames, some empty
    std::string mixed, mixed_plain;
    for (int i = 0; i < 5; i++) {
        std::string p = text_data((size_t{3} << 20) + static_cast<size_t>(i) * 100001, 40u + static_cast<uint32_t>(i));
        mixed += frame(p, true, 1, i % 2 == 0);
        mixed_plain += p;
    }
    streams.push_back({mixed, mixed_plain});
    for (size_t s = 0; s < streams.size(); s++)
        for (int threads : {0, 1, 2, 4}) {
            testtree::TempDir t;
            auto got = read_file(put(t, streams[s].first), threads);
            INFO("stream " << s << ", threads " << threads << ": " << got.second);
            CHECK(got.second == "");
            CHECK(got.first == streams[s].second);
        }
}

TEST_CASE("zstd reader: an error in a later frame comes after the frames before it, with any threads") {
    std::vector<std::string> plain;
    std::vector<std::string> frames;
    for (int i = 0; i < 4; i++) {
        plain.push_back(text_data((size_t{2} << 20) + static_cast<size_t>(i), 100u + static_cast<uint32_t>(i)));
        frames.push_back(frame(plain.back()));
    }
    auto before = [&](int k) {
        std::string s;
        for (int i = 0; i < k; i++) s += plain[static_cast<size_t>(i)];
        return s;
    };
    struct Case {
        const char* name;
        std::string bytes;
        int good;  // frames that read back before the error
        const char* error;
    };
    std::string corrupt = frames[2];
    corrupt[corrupt.size() / 2] = static_cast<char>(corrupt[corrupt.size() / 2] ^ 0x55);
    std::vector<Case> cases = {
        {"skippable frame",
         frames[0] + frames[1] + std::string("\x50\x2a\x4d\x18\x04\x00\x00\x00", 8) + "abcd" + frames[2], 2,
         "skippable"},
        {"frame without checksum", frames[0] + frame(plain[1], false) + frames[2], 1, "checksum"},
        {"corrupt frame", frames[0] + frames[1] + corrupt + frames[3], 2, "corrupt"},
        {"cut inside a frame", frames[0] + frames[1] + frames[2].substr(0, frames[2].size() / 3), 2, "truncated"},
        {"cut inside a frame header", frames[0] + frames[1].substr(0, 3), 1, "truncated"},
        {"garbage after the last frame", frames[0] + frames[1] + "garbage!", 2, "magic"},
        {"empty file", "", 0, "truncated"},
    };
    for (const auto& c : cases)
        for (int threads : {0, 1, 2, 4}) {
            testtree::TempDir t;
            auto got = read_file(put(t, c.bytes), threads);
            INFO(c.name << ", threads " << threads << ": " << got.second);
            CHECK(got.second.find(c.error) != std::string::npos);
            // What came out is exactly the good frames, plus at most part of the bad one.
            CHECK(got.first.compare(0, before(c.good).size(), before(c.good)) == 0);
            CHECK(got.first.size() < before(c.good + 1).size() + (c.good == 4 ? 1 : 0));
        }
}

TEST_CASE("zstd reader: a pipe is read in order by one decoder; stopping early does not hang") {
    std::string plain = text_data(3 * capture::kFrameBytes, 9);
    std::string z;
    for (size_t at = 0; at < plain.size(); at += capture::kFrameBytes)
        z += frame(plain.substr(at, capture::kFrameBytes));
    int p[2];
    REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    base::Fd rd(p[0]), wr(p[1]);
    std::thread feeder([&] {
        (void)base::write_all(wr.get(), z.data(), z.size());
        wr.reset();
    });
    std::string out;
    std::string err;
    {
        ZstdReader zr(rd.get());
        for (;;) {
            auto r = zr.next();
            if (!r) {
                err = r.error().message;
                break;
            }
            if (r->second == 0) break;
            out.append(r->first, r->second);
        }
    }
    feeder.join();
    CHECK(err == "");
    CHECK(out == plain);
    // Many frames decoded ahead, one slice taken, then destroyed.
    testtree::TempDir t;
    std::string f = put(t, z + z + z);
    base::Fd fd(::open(f.c_str(), O_RDONLY | O_CLOEXEC));
    for (int threads : {1, 2, 4}) {
        ::lseek(fd.get(), 0, SEEK_SET);
        ZstdReader zr(fd.get(), threads);
        auto r = zr.next();
        REQUIRE(r.ok());
        CHECK(r->second > 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

TEST_CASE("zstd reader: a frame that needs a window over 16 MiB is refused with one clear line") {
    std::string raw = text_data(40 << 20, 5);
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 25);
    std::string z(ZSTD_compressBound(raw.size()), '\0');
    size_t n = ZSTD_compress2(c, z.data(), z.size(), raw.data(), raw.size());
    ZSTD_freeCCtx(c);
    REQUIRE_FALSE(ZSTD_isError(n));
    z.resize(n);
    testtree::TempDir t;
    for (int threads : {0, 2}) {
        auto got = read_file(put(t, z), threads);
        INFO(got.second);
        CHECK(got.second.find("window over 16 MiB") != std::string::npos);
        CHECK(got.second.find('\n') == std::string::npos);
        CHECK(got.first.empty());
    }
}

TEST_CASE("zstd frames: the window a frame header declares") {
    auto u = [](const std::string& s) { return reinterpret_cast<const unsigned char*>(s.data()); };
    // Single segment: the window is the content size (1-, 2- and 4-byte fields).
    for (size_t n : {size_t{3}, size_t{1000}, size_t{70000}}) {
        std::string f = frame(text_data(n, 7));
        CHECK(capture::frame_window(u(f), f.size()) == std::optional<uint64_t>(n));
    }
    // A window descriptor: exponent 15 (2^25) with mantissa 3 eighths.
    std::string h = std::string("\x28\xb5\x2f\xfd", 4) + "\x04" + static_cast<char>((15 << 3) | 3);
    CHECK(capture::frame_window(u(h), h.size()) == std::optional<uint64_t>((uint64_t{1} << 25) * 11 / 8));
    CHECK_FALSE(capture::frame_window(u(h), 5).has_value());  // the descriptor is missing
}

TEST_CASE("zstd reader: a large declared window is refused even where libzstd decodes the frame in one go") {
    // A small single-segment frame rewritten to declare a 32 MiB window: libzstd
    // decodes it (its one-shot paths ignore windowLogMax); layover refuses it.
    std::string raw = text_data(1000, 11), f = frame(raw);
    REQUIRE((static_cast<unsigned char>(f[4]) & 0xE0) == 0x60);  // single segment, 2-byte content size
    std::string big = f.substr(0, 4) + static_cast<char>((f[4] & ~0x20)) + static_cast<char>(15 << 3) + f.substr(5);
    std::string back(raw.size(), '\0');
    REQUIRE(ZSTD_decompress(back.data(), back.size(), big.data(), big.size()) == raw.size());
    CHECK(back == raw);
    testtree::TempDir t;
    for (int threads : {0, 2}) {
        auto got = read_file(put(t, big + frame("tail")), threads);
        INFO(got.second);
        CHECK(got.second.find("window over 16 MiB") != std::string::npos);
        CHECK(got.first.empty());
    }
}

TEST_CASE("zstd frames: walking a frame of many empty blocks reads headers through a window, not one by one") {
    std::string f = std::string("\x28\xb5\x2f\xfd", 4) + "\x04" + static_cast<char>(10 << 3);  // 1 MiB window
    for (int i = 0; i < 20000; i++) f += std::string("\0\0\0", 3);                             // empty raw blocks
    f += std::string("\x01\0\0", 3) + std::string("\0\0\0\0", 4);  // the last one, then a checksum
    size_t reads = 0;
    auto rd = [&](uint64_t off, unsigned char* p, size_t n) {
        reads++;
        if (off > f.size() || f.size() - off < n) return false;
        std::copy(f.data() + off, f.data() + off + n, p);
        return true;
    };
    CHECK(capture::frame_end(rd, 0, f.size()) == std::optional<uint64_t>(f.size()));
    CHECK(reads < 40);
}
