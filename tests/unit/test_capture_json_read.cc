// The manifest and sums are read by a strict one-pass parser instead of a
// document tree: it must accept every valid spelling (escapes, surrogate
// pairs, any key order, unknown fields) and refuse what nlohmann refused, and
// more (duplicate fields, numbers that do not fit).
#include <catch2/catch.hpp>

#include "capture/patch/manifest.h"
#include "helper/base/json/reader.h"
#include "helper/base/json/writer.h"

using namespace capture;

namespace {

std::string manifest_with(const std::string& change, const std::string& extra = "") {
    return R"({"format": "layover-patch/1", "target": "/t", )" + extra + R"("changes": [)" + change +
           R"(], "base": [{"path": "a", "absent": true}]})";
}

std::string error_of(const std::string& text) {
    auto r = manifest_from_text(text);
    return r ? "" : r.error().message;
}

}  // namespace

TEST_CASE("capture json_read: escapes, surrogate pairs, key order and unknown fields are read") {
    // Python's json.dumps spells non-ASCII as \u escapes (é, then U+1F600 as a pair).
    std::string text = R"({"base": [{"absent": true, "p\u0061th": "a"}], "unknown": {"x": [1, 2.5e3, null, [[]], {}]},
        "changes": [{"kind": "added", "path": "caf\u00e9/\ud83d\ude00\n", "type": "file", "size": 18446744073709551615,
        "mode": 420, "mtime_ns": -5, "captured": true, "xattrs": [{"name": "user.a", "value_b64": "eA=="}]}],
        "target": "/t", "format": "layover-patch/1"} )";
    auto m = manifest_from_text(text);
    INFO((m ? "" : m.error().message));
    REQUIRE(m.ok());
    REQUIRE(m->changes.size() == 1);
    CHECK(m->changes[0].path == "caf\xc3\xa9/\xf0\x9f\x98\x80\n");
    CHECK(m->changes[0].size == UINT64_MAX);
    CHECK(m->changes[0].mtime_ns == -5);
    CHECK(m->changes[0].xattrs.at("user.a") == "x");
    REQUIRE(m->base.size() == 1);
    CHECK(m->base[0].path == "a");
    CHECK(m->base[0].absent);
    // path_b64 wins over path, whichever comes first.
    auto b = manifest_from_text(manifest_with(R"({"path_b64": "/w==", "path": "shown", "kind": "added"})"));
    REQUIRE(b.ok());
    CHECK(b->changes[0].path == "\xff");
}

TEST_CASE("capture json_read: malformed JSON is refused, however it is malformed") {
    const std::string ok = manifest_with(R"({"path": "a", "kind": "added"})");
    REQUIRE(error_of(ok) == "");
    for (const std::string& text : {
             manifest_with(R"({"path": "a", "kind": "added",})"),                 // trailing comma
             manifest_with(R"({"path": "\ud800", "kind": "added"})"),             // lone high surrogate
             manifest_with(R"({"path": "\udc00", "kind": "added"})"),             // lone low surrogate
             manifest_with("{\"path\": \"a\xff\", \"kind\": \"added\"}"),         // invalid UTF-8
             manifest_with("{\"path\": \"\xc0\xaf\", \"kind\": \"added\"}"),      // overlong '/'
             manifest_with("{\"path\": \"\xed\xa0\x80\", \"kind\": \"added\"}"),  // encoded surrogate
             manifest_with("{\"path\": \"a\tb\", \"kind\": \"added\"}"),          // raw control character
             manifest_with(R"({"path": "a", "kind": "added", "size": 01})"),
             manifest_with(R"({"path": "a", "kind": "added", "size": 1.})"),
             manifest_with(R"({"path": "a" "kind": "added"})"),
             manifest_with(R"({"path": "a", "kind": "added", "x": tru})"), ok + "x", ok.substr(0, ok.size() - 1),
             std::string("{\"x\": ") + std::string(100000, '[') + "}",  // deep nesting: refused, no crash
         }) {
        INFO(text.substr(0, 200));
        CHECK(error_of(text).find("invalid manifest: not valid JSON") == 0);
    }
    CHECK(error_of("[]") == "invalid manifest: not a JSON object");
}

TEST_CASE("capture json_read: fields must have their type, fit, and appear once") {
    auto err = [](const std::string& change) { return error_of(manifest_with(change)); };
    CHECK(err(R"({"path": "a", "kind": "added", "mode": 4294967296})").find("change a: a number field") !=
          std::string::npos);
    CHECK(err(R"({"path": "a", "kind": "added", "size": -1})").find("change a: a number field") != std::string::npos);
    CHECK(err(R"({"path": "a", "kind": "added", "size": 1.5})").find("change a: a number field") != std::string::npos);
    CHECK(err(R"({"path": "a", "kind": "added", "kind": "deleted"})").find("change a: field kind given twice") !=
          std::string::npos);
    CHECK(err(R"({"path": "a", "kind": 3})").find("change a: unknown kind") != std::string::npos);
    CHECK(err(R"({"path": "a", "kind": "added", "type": "symlink"})").find("a symlink without a target") !=
          std::string::npos);
    CHECK(err(R"({"path": 7, "kind": "added"})").find("a change has no valid path") != std::string::npos);
    CHECK(err(R"({"path": "a", "kind": "added", "captured": 1})").find("captured is not a boolean") !=
          std::string::npos);
    CHECK(err(R"({"path": "a", "kind": "added", "xattrs": [{"name": "trusted.x", "value_b64": ""}]})")
              .find("only user.* xattrs") != std::string::npos);
    // The first problem in check order is reported, whatever the key order.
    CHECK(err(R"({"captured": 1, "size": 1.5, "kind": "nope", "path": "a"})").find("change a: unknown kind") !=
          std::string::npos);
    CHECK(error_of(R"({"format": "layover-patch/4", "changes": 5})").find("unsupported patch format") == 0);
    CHECK(error_of(manifest_with(R"({"path": "a", "kind": "added"})", R"("session": null, )")) ==
          "invalid manifest: session is not a string");
    CHECK(error_of(R"({"format": "layover-patch/1", "target": "/t", "changes": []})") ==
          "invalid manifest: no base array");
    auto base_err = error_of(R"({"format": "layover-patch/1", "target": "/t", "changes": [],
                                 "base": [{"path": "b", "absent": "yes"}]})");
    CHECK(base_err == "invalid manifest: base b: absent is not a boolean");
}

TEST_CASE("capture json_read: the sums list") {
    auto s =
        sums_from_text(R"({"members": [{"path_b64": "/w==", "fingerprint": "f1"}, {"path": "b", "fingerprint": "f2"}],
                                "format": "layover-sums/1"})");
    REQUIRE(s.ok());
    REQUIRE(s->size() == 2);
    CHECK((*s)[0] == std::make_pair(std::string("\xff"), std::string("f1")));
    CHECK((*s)[1].first == "b");
    CHECK(sums_from_text(R"({"format": "layover-sums/1", "members": [{"path": "b"}]})")
              .error()
              .message.find("has an invalid entry") != std::string::npos);
    CHECK(sums_from_text(R"({"format": "layover-sums/2", "members": []})")
              .error()
              .message.find("is not a valid sums list") != std::string::npos);
    CHECK(sums_from_text(R"({"format": 1, "members": []})").error().message.find("is not a valid sums list") !=
          std::string::npos);
}

TEST_CASE("json writer: terminal-steering code points become \\u escapes, and read back the same") {
    std::string name =
        "a\xc2\x9b"
        "31m\xe2\x80\xae\x7f\xc3\xa9";  // C1 CSI, RLO, DEL, then a plain é
    std::string out;
    base::json::str(&out, name);
    CHECK(out == "\"a\\u009b31m\\u202e\\u007f\xc3\xa9\"");
    for (char c : out) CHECK(static_cast<unsigned char>(c) >= 0x20);
    auto m = manifest_from_text(manifest_with("{\"path\": " + out + ", \"kind\": \"added\"}"));
    REQUIRE(m.ok());
    CHECK(m->changes[0].path == name);
}

TEST_CASE("json writer: a code point past U+FFFF is escaped as a surrogate pair and reads back the same") {
    std::string name = "x\xe2\x80\x8b\xf3\xa0\x80\x81";  // U+200B, then the tag U+E0001
    std::string out;
    base::json::str(&out, name);
    CHECK(out == "\"x\\u200b\\udb40\\udc01\"");
    auto m = manifest_from_text(manifest_with("{\"path\": " + out + ", \"kind\": \"added\"}"));
    REQUIRE(m.ok());
    CHECK(m->changes[0].path == name);
}
