// The reader tests' helpers (test_capture_reader*.cc): a file member, a raw
// tar opened as a patch with its one-line error, a manifest put before a
// payload, a valid patch written and opened, and a tar written in frames. A test file takes them,
// and the types they use, with `using namespace testreader;`.
#pragma once
#include <fcntl.h>

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "capture/patch/reader.h"
#include "capture/patch/zstream.h"
#include "helper/base/fd.h"
#include "tests/unit/capture_patch_util.h"
#include "tests/unit/capture_tree.h"

namespace testreader {

using capture::Limits;
using capture::Member;
using capture::Patch;
using testpatch::M;

inline M file(const std::string& name, const std::string& data) {
    M m;
    m.name = name;
    m.data = data;
    return m;
}

// Open raw tar bytes as a patch and return the error ("" when it opened).
inline std::string open_error(const std::string& raw, const Limits& limits = {}, bool checksum = true) {
    testtree::TempDir t;
    std::string f = t.path + "/p.tar.zst";
    testpatch::write_zst(f, raw, checksum);
    auto p = Patch::open(f, limits);
    if (p) return "";
    std::string msg = p.error().message;
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find(f) != std::string::npos);
    return msg;
}

inline std::string with_manifest(const std::vector<M>& ms, const std::string& payload_tar_without_end) {
    M man = file(".layover/manifest.json", testpatch::manifest_for(ms));
    std::string head = testpatch::tar_of({man});
    head.resize(head.size() - 1024);  // drop its end blocks
    return head + payload_tar_without_end + testpatch::tar_end();
}

// Writes a valid patch of ms to f and opens it (which must succeed).
inline Patch written_and_opened(const std::string& f, const std::vector<M>& ms) {
    testpatch::write_zst(f, testpatch::valid_tar(ms));
    auto p = Patch::open(f);
    INFO((p ? "" : p.error().message));
    REQUIRE(p.ok());
    return std::move(p.value());
}

// The tar compressed the way layover writes patches: frames of kFrameBytes.
inline void write_framed(const std::string& f, const std::string& raw) {
    base::Fd out(::open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    capture::ZstdWriter w(out.get());
    REQUIRE(w.write(raw.data(), raw.size()).ok());
    REQUIRE(w.finish().ok());
}

}  // namespace testreader
