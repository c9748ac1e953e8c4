// Originals in layover-patch/3: each one a .layover/original member right
// before its file, read back by fingerprint; a member that does not hold
// exactly its listed original is refused.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "capture/patch/reader.h"
#include "capture/patch/writer.h"
#include "capture/scan/entry/fingerprint.h"
#include "helper/base/fd.h"
#include "tests/unit/capture_tree.h"

using capture::Change;
using capture::Item;
using capture::Kind;
using capture::Type;

namespace {

struct Fixture {
    testtree::TempDir t;
    capture::Manifest m;
    std::vector<Item> items;
    std::unordered_map<std::string, std::string_view> before;
    std::map<std::string, std::string> now;

    // A modified text file `path`: `base` in the real tree, `data` in the session.
    void modified(const std::string& path, const std::string& base, const std::string& data) {
        Item it;
        it.change.path = path;
        it.change.kind = Kind::Modified;
        it.change.type = it.change.old_type = Type::File;
        it.change.size = data.size();
        it.change.mode = it.change.old_mode = 0644;
        m.changes.push_back(it.change);
        items.push_back(std::move(it));
        capture::BaseEntry b;
        b.path = path;
        b.type = Type::File;
        b.size = base.size();
        b.mode = 0644;
        b.fingerprint = capture::fingerprint_bytes(base);
        m.base.push_back(b);
        now[path] = data;
    }

    // Writes the patch: `format`, the manifest listing `listed`, and
    // before each file in `members` that member's content; then opens it.
    base::Result<capture::Patch> write(const std::string& format, const std::vector<std::string>& listed,
                                       const std::vector<std::pair<std::string, std::string>>& members) {
        m.format = format;
        m.target = "/t";
        for (const auto& text : listed) m.originals.push_back({capture::fingerprint_bytes(text), text.size()});
        for (const auto& [path, text] : members) before.emplace(path, text);
        capture::WriteOptions wo;
        wo.original = [&](const Item& it) -> base::Result<std::optional<capture::OriginalContent>> {
            auto o = before.find(it.change.path);
            if (o == before.end()) return std::optional<capture::OriginalContent>();
            return std::optional<capture::OriginalContent>({o->second, capture::fingerprint_bytes(o->second)});
        };
        std::string f = t.path + "/p.tar.zst";
        auto out = base::open_at(AT_FDCWD, f, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        REQUIRE(out.ok());
        int n = 0;
        auto open_file = [&](const Item& it) -> base::Result<base::Fd> {
            std::string tmp = t.path + "/data" + std::to_string(n++);
            auto w = base::open_at(AT_FDCWD, tmp, O_RDWR | O_CREAT | O_TRUNC, 0600);
            REQUIRE(w.ok());
            const std::string& d = now[it.change.path];
            REQUIRE(base::write_all(w->get(), d.data(), d.size()).ok());
            return base::open_at(AT_FDCWD, tmp, O_RDONLY);
        };
        REQUIRE(capture::write_patch(out->get(), m, items, open_file, wo).ok());
        return capture::Patch::open(f);
    }
};

}  // namespace

TEST_CASE("capture originals: /3 stores each original before its file and reads it back by fingerprint") {
    Fixture fx;
    const std::string a0 = "one\ntwo\n", b0 = "alpha\nbeta\ngamma\n";
    fx.modified("a.txt", a0, "one\nTWO\n");
    fx.modified("b.txt", b0, "alpha\nBETA\ngamma\n");
    auto p = fx.write("layover-patch/3", {a0, b0}, {{"a.txt", a0}, {"b.txt", b0}});
    INFO((p ? "" : p.error().message));
    REQUIRE(p.ok());
    REQUIRE(p->original(capture::fingerprint_bytes(a0)));
    CHECK(*p->original(capture::fingerprint_bytes(a0)) == a0);
    CHECK(*p->original(capture::fingerprint_bytes(b0)) == b0);
    // The payload reads back through the members between (its sums line up).
    CHECK(p->members().size() == 2);
    CHECK(p->read_file("a.txt", 100).value() == "one\nTWO\n");
    CHECK(p->read_file("b.txt", 100).value() == "alpha\nBETA\ngamma\n");
}

TEST_CASE("capture originals: a /3 original member that does not hold exactly its listed original is refused") {
    const std::string a0 = "one\ntwo\n", b0 = "alpha\nbeta\ngamma\n";
    Fixture fx;
    fx.modified("a.txt", a0, "one\nTWO\n");
    fx.modified("b.txt", b0, "alpha\nBETA\ngamma\n");
    auto error_of = [&](base::Result<capture::Patch> p) { return p ? std::string() : p.error().message; };
    SECTION("two originals in one member") {
        CHECK(error_of(fx.write("layover-patch/3", {a0, b0}, {{"a.txt", a0 + b0}}))
                  .find("the manifest lists 2 originals but the patch has 1 .layover/original members (cut off?)") !=
              std::string::npos);
    }
    SECTION("one cut short") {
        CHECK(error_of(fx.write("layover-patch/3", {a0, b0}, {{"a.txt", a0.substr(0, 3)}, {"b.txt", b0}}))
                  .find("original #1 holds 3 bytes, the manifest says 8") != std::string::npos);
    }
    SECTION("one more member than listed") {
        CHECK(error_of(fx.write("layover-patch/3", {a0}, {{"a.txt", a0}, {"b.txt", b0}}))
                  .find("more .layover/original members than the manifest lists") != std::string::npos);
    }
    SECTION("the /3 member in a /2 patch") {
        CHECK(error_of(fx.write("layover-patch/2", {a0}, {{"a.txt", a0}}))
                  .find("a layover-patch/2 patch has a .layover/original member") != std::string::npos);
    }
    SECTION("a content that is not its fingerprint's") {
        CHECK(error_of(fx.write("layover-patch/3", {a0, b0}, {{"a.txt", "one\ntwX\n"}, {"b.txt", b0}}))
                  .find("does not match its fingerprint") != std::string::npos);
    }
}
