// Rejections kept in a session (helper/store/records/rejections.h): the file reads
// back what was written, is read as untrusted input, and seqs are never
// reused.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "helper/store/records/rejections.h"
#include "tests/unit/capture_tree.h"

namespace {

session::Rejection whole(const std::string& path, const std::string& reason) {
    session::Rejection r;
    r.path = path;
    r.reason = reason;
    r.time = "2026-11-25T23:00:00Z";
    r.fingerprint = "0123456789abcdef0123456789abcdef";
    return r;
}

std::string slurp(const std::string& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("rejections: records write and read back, byte paths included", "[rejections]") {
    session::Rejections all;
    all.next_seq = 7;
    all.list.push_back(whole("proj/a \"b\".txt", "keep the old name"));
    all.list.back().seq = 3;
    session::Rejection h = whole(std::string("proj/\xff\x01name"), "");
    h.seq = 5;
    h.hunk = 2;
    h.hunk_fingerprint = "fedcba98765432100123456789abcdef";
    all.list.push_back(h);
    auto back = session::rejections_from_text(session::rejections_to_text(all));
    REQUIRE(back.ok());
    CHECK(back->next_seq == 7);
    REQUIRE(back->list.size() == 2);
    CHECK(back->list[0] == all.list[0]);
    CHECK(back->list[1] == all.list[1]);
    // The fuzz seed (tests/fuzz/make_seeds.py) is a valid file, so mutations start from one.
    auto seed = session::rejections_from_text(slurp("tests/fuzz/corpus/json/rejections"));
    REQUIRE(seed.ok());
    CHECK(seed->list.size() == 2);
    CHECK(seed->list[1].path == std::string("proj/\xff"));
}

TEST_CASE("rejections: the reader refuses what the file never holds", "[rejections]") {
    const char* good_rec = R"({"seq": 1, "path": "p/f", "hunk": 0, "reason": "r", "time": "t", "fingerprint": "ab"})";
    std::string head = R"({"format": "layover-rejections/1", "next_seq": 2, "rejections": [)";
    REQUIRE(session::rejections_from_text(head + good_rec + "]}").ok());
    const char* bad_recs[] = {
        R"({"seq": 0, "path": "p/f", "fingerprint": "ab"})",                         // seq 0
        R"({"seq": 1, "path": "/etc/passwd", "fingerprint": "ab"})",                 // absolute
        R"({"seq": 1, "path": "p/../../x", "fingerprint": "ab"})",                   // dot-dot
        R"({"seq": 1, "path": "p//x", "fingerprint": "ab"})",                        // not clean
        R"({"seq": 1, "path": "", "fingerprint": "ab"})",                            // empty
        R"({"seq": 1, "path": "p/f", "fingerprint": "ab", "reason": "a\nb"})",       // two lines
        R"({"seq": 1, "path": "p/f", "fingerprint": "ab", "reason": "\u001b[2J"})",  // escape
        R"({"seq": 1, "path": "p/f", "fingerprint": "a b"})",                        // not a token
        R"({"seq": 1, "path": "p/f"})",                                              // no fingerprint
        R"({"seq": 1, "path": "p/f", "hunk": 2, "fingerprint": "ab"})",              // hunk w/o its fp
        R"({"seq": 1, "path": "p/f", "hunk": -1, "fingerprint": "ab"})",             // negative
        R"({"seq": 1, "path": "p/f", "hunk": 1.5, "fingerprint": "ab", "hunk_fingerprint": "c"})",
        R"({"seq": 1, "path": "p/f", "fingerprint": "ab",})",  // trailing comma
        R"("p/f")",
    };
    for (const char* rec : bad_recs) {
        INFO(rec);
        CHECK_FALSE(session::rejections_from_text(head + rec + "]}").ok());
    }
    std::string long_reason(session::kMaxReason + 1, 'x');
    CHECK_FALSE(session::rejections_from_text(head + R"({"seq": 1, "path": "p", "fingerprint": "ab", "reason": ")" +
                                              long_reason + "\"}]}")
                    .ok());
    // Out of order, unknown format, garbage after the value.
    CHECK_FALSE(session::rejections_from_text(head + good_rec + "," + good_rec + "]}").ok());
    CHECK_FALSE(session::rejections_from_text(R"({"format": "layover-rejections/9", "rejections": []})").ok());
    CHECK_FALSE(session::rejections_from_text(head + "]} x").ok());
    CHECK_FALSE(session::rejections_from_text(R"({"rejections": []})").ok());
}

TEST_CASE("rejections: add replaces the same path and hunk, remove keeps the seq counter", "[rejections]") {
    testtree::TempDir t;
    auto none = session::read_rejections(t.path);
    REQUIRE(none.ok());
    CHECK(none->list.empty());

    auto s1 = session::add_rejection(t.path, whole("proj/f", "no"));
    REQUIRE(s1.ok());
    CHECK(s1.value() == 1);
    session::Rejection h = whole("proj/f", "not this hunk");
    h.hunk = 2;
    h.hunk_fingerprint = "cd";
    REQUIRE(session::add_rejection(t.path, h).value() == 2);
    auto s3 = session::add_rejection(t.path, whole("proj/f", "still no"));  // replaces seq 1
    REQUIRE(s3.ok());
    CHECK(s3.value() == 3);

    auto all = session::read_rejections(t.path);
    REQUIRE(all.ok());
    REQUIRE(all->list.size() == 2);
    CHECK(all->list[0].seq == 2);
    CHECK(all->list[0].hunk == 2);
    CHECK(all->list[1].reason == "still no");
    // On disk: the file itself, mode 0600, no temp left behind.
    struct stat st;
    REQUIRE(::stat((t.path + "/rejections.json").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(::stat((t.path + "/.rejections.json.tmp").c_str(), &st) != 0);
    CHECK(slurp(t.path + "/rejections.json").find("\"still no\"") != std::string::npos);

    REQUIRE(session::remove_rejections(t.path, {2, 3, 99}).ok());
    all = session::read_rejections(t.path);
    REQUIRE(all.ok());
    CHECK(all->list.empty());
    CHECK(session::add_rejection(t.path, whole("proj/g", "")).value() == 4);  // never reused
}

TEST_CASE("rejections: add refuses a reason of two lines and an unclean path", "[rejections]") {
    testtree::TempDir t;
    CHECK_FALSE(session::add_rejection(t.path, whole("proj/f", "one\ntwo")).ok());
    CHECK_FALSE(session::add_rejection(t.path, whole("../f", "")).ok());
    CHECK_FALSE(session::reason_problem(std::string(session::kMaxReason + 1, 'x')).empty());
    CHECK(session::reason_problem("keep the old name").empty());
    struct stat st;
    CHECK(::stat((t.path + "/rejections.json").c_str(), &st) != 0);  // nothing written
    testtree::make(t.path + "/rejections.json", "file:{\"format\": 1}");
    auto r = session::read_rejections(t.path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("rejections.json is malformed") != std::string::npos);
}
