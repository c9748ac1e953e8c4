// add_content_risks: which sides it reads, and status's risk-free verdicts.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <set>

#include "capture/scan/caches/verdicts.h"
#include "capture/scan/walk/scan.h"
#include "helper/base/fd.h"
#include "review/prompt/risk_scan.h"
#include "tests/unit/capture_scan_util.h"
#include "tests/unit/capture_tree.h"

using capture::Change;
using capture::Kind;
using capture::Type;

namespace {

Change file(const std::string& path, Kind kind) {
    Change c;
    c.path = path;
    c.kind = kind;
    c.type = Type::File;
    c.old_type = kind == Kind::Added ? Type::None : Type::File;
    c.size = 100;
    return c;
}

struct Trees {
    std::map<std::string, std::string> now, before;
    std::multiset<std::string> read_now, read_before;
    std::mutex mu;  // add_content_risks reads on two threads
    review::TextOf new_text() {
        return [this](const std::string& p) -> std::optional<std::string> {
            std::lock_guard<std::mutex> g(mu);
            read_now.insert(p);
            auto it = now.find(p);
            return it == now.end() ? std::nullopt : std::optional<std::string>(it->second);
        };
    }
    review::TextOf old_text() {
        return [this](const std::string& p) -> std::optional<std::string> {
            std::lock_guard<std::mutex> g(mu);
            read_before.insert(p);
            auto it = before.find(p);
            return it == before.end() ? std::nullopt : std::optional<std::string>(it->second);
        };
    }
};

}  // namespace

TEST_CASE("risk scan: the old side is read only when the new one shows a risk, and can take it away", "[risk-scan]") {
    std::string tok = "glpat-" + std::string("aB3dE5gH7jK9mN1pQ2sT4");
    Trees t;
    t.now = {{"plain.txt", "hello\n"}, {"kept.env", "T=" + tok + "\n"}, {"new.env", "T=" + tok + "\n"}};
    t.before = {{"plain.txt", "hi\n"}, {"kept.env", "T=" + tok + "\n#\n"}, {"new.env", "x\n"}};
    std::vector<Change> changes = {file("plain.txt", Kind::Modified), file("kept.env", Kind::Modified),
                                   file("new.env", Kind::Modified)};
    review::RiskContext ctx;
    review::add_content_risks(&ctx, changes, t.new_text(), t.old_text());
    CHECK(t.read_now == std::multiset<std::string>{"plain.txt", "kept.env", "new.env"});
    CHECK(t.read_before == std::multiset<std::string>{"kept.env", "new.env"});  // not plain.txt
    CHECK(ctx.content.count("kept.env") == 0);                                  // the secret was there before
    REQUIRE(ctx.content.count("new.env") == 1);
    CHECK(ctx.content["new.env"] == std::vector<std::string>{"secret: GitLab token on line 1 (glpat-…)"});
    REQUIRE(ctx.secrets.size() == 1);
    CHECK(ctx.secrets[0].first == "new.env");
}

TEST_CASE("risk scan: many files on two threads report in change order", "[risk-scan]") {
    std::string tok = "glpat-" + std::string("aB3dE5gH7jK9mN1pQ2sT4");
    Trees t;
    std::vector<Change> changes;
    for (int i = 0; i < 600; i++) {
        std::string p = "f" + std::to_string(1000 + i);
        t.now[p] = i % 100 == 7 ? "T=" + tok + "\n" : "text " + std::to_string(i) + "\n";
        changes.push_back(file(p, Kind::Added));
    }
    review::RiskContext ctx;
    review::add_content_risks(&ctx, changes, t.new_text(), t.old_text());
    CHECK(t.read_now.size() == 600);
    CHECK(t.read_before.empty());  // additions have no old side
    std::vector<std::string> order;
    for (const auto& [path, hit] : ctx.secrets) order.push_back(path);
    CHECK(order == std::vector<std::string>{"f1007", "f1107", "f1207", "f1307", "f1407", "f1507"});
}

TEST_CASE("risk scan: a verdict cache skips files known risk-free at their stats, and learns clean ones",
          "[risk-scan]") {
    std::string tok = "glpat-" + std::string("aB3dE5gH7jK9mN1pQ2sT4");
    Trees t;
    t.now = {{"a.txt", "hello\n"}, {"b.env", "T=" + tok + "\n"}};
    std::vector<Change> changes = {file("a.txt", Kind::Added), file("b.env", Kind::Added)};
    capture::PairKey ka{{1, 10, 6, 4, 5}, {}}, kb{{1, 11, 6, 4, 5}, {}};
    int64_t start = int64_t{1} << 62;  // long after those ctimes: not racy
    capture::VerdictCache first(start);
    first.note("a.txt", ka);
    first.note("b.env", kb);
    review::RiskContext ctx;
    review::add_content_risks(&ctx, changes, t.new_text(), t.old_text(), &first);
    CHECK(t.read_now.size() == 2);
    CHECK(ctx.content.count("b.env") == 1);

    capture::VerdictCache second(start);
    second.parse(first.serialize());
    // As the scan does: each change marked from note().
    changes[0].risk_free_cached = second.note("a.txt", ka);
    changes[1].risk_free_cached = second.note("b.env", kb);
    CHECK(changes[0].risk_free_cached);
    CHECK_FALSE(changes[1].risk_free_cached);
    t.read_now.clear();
    review::RiskContext again;
    review::add_content_risks(&again, changes, t.new_text(), t.old_text(), &second);
    CHECK(t.read_now == std::multiset<std::string>{"b.env"});  // a.txt known clean; a risky file is read each time
    CHECK(again.content == ctx.content);
    CHECK_FALSE(second.dirty());

    // a.txt rewritten (a new ctime): read again, and its secret seen.
    t.now["a.txt"] = "T=" + tok + "\n";
    capture::VerdictCache third(start);
    third.parse(first.serialize());
    capture::PairKey moved = ka;
    moved.upper.ctime_ns++;
    changes[0].risk_free_cached = third.note("a.txt", moved);
    changes[1].risk_free_cached = third.note("b.env", kb);
    CHECK_FALSE(changes[0].risk_free_cached);
    t.read_now.clear();
    review::RiskContext later;
    review::add_content_risks(&later, changes, t.new_text(), t.old_text(), &third);
    CHECK(t.read_now == std::multiset<std::string>{"a.txt", "b.env"});
    CHECK(later.content.count("a.txt") == 1);
}

namespace {

// A session-like pair: what the walk's reader finds must be what the risk
// scan finds reading by path (the way status did before).
struct WalkCase {
    ScanPair p;
    std::string tok = "glpat-" + std::string("aB3dE5gH7jK9mN1pQ2sT4");
    WalkCase() {
        for (const auto* d : {"/newdir", "/node_modules", "/node_modules/x"}) testtree::make(p.up + d, "dir");
        testtree::make(p.low + "/node_modules", "dir");
        testtree::make(p.low + "/kept.env", "file:T=" + tok + "\n");
        testtree::make(p.up + "/kept.env", "file:T=" + tok + "\n#\n");  // the secret was there before
        testtree::make(p.low + "/plain.txt", "file:hi\n");
        testtree::make(p.up + "/plain.txt", "file:hello\n");
        testtree::make(p.low + "/edit.env", "file:A=1\n");
        testtree::make(p.up + "/edit.env", "file:A=" + tok + "\n");
        testtree::make(p.up + "/new.env", "file:T=" + tok + "\n");
        testtree::make(p.up + "/newdir/deep.env", "file:T=" + tok + "\n");  // typed from d_type alone
        testtree::make(p.low + "/same.txt", "file:same\n");
        testtree::make(p.up + "/same.txt", "file:same\n");                      // not a change
        testtree::make(p.up + "/node_modules/x/i.js", "file:T=" + tok + "\n");  // content not scanned
    }
    std::vector<Change> scan(bool summary_only, review::WalkRiskReader* reader, capture::VerdictCache* v = nullptr) {
        capture::ScanOptions o;
        o.summary_only = summary_only;
        o.reader = reader;
        o.verdicts = v;
        std::vector<Change> out;
        for (auto& it : scan_dirs(p.up, p.low, o).items) out.push_back(std::move(it.change));
        return out;
    }
    // The risk scan's own reads, by path beneath each tree.
    review::RiskContext by_path(std::vector<Change> changes, std::multiset<std::string>* read) {
        base::Fd up(::open(p.up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        base::Fd low(::open(p.low.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        std::mutex mu;
        review::RiskContext ctx;
        review::add_content_risks(
            &ctx, changes,
            [&](const std::string& path) {
                std::lock_guard<std::mutex> g(mu);
                if (read) read->insert(path);
                return review::read_text_beneath(up.get(), path);
            },
            [&](const std::string& path) { return review::read_text_beneath(low.get(), path); });
        return ctx;
    }
};

Change::Read read_of(const std::vector<Change>& cs, const std::string& path) {
    for (const auto& c : cs)
        if (c.path == path) return c.content_read;
    return Change::Read::Unreadable;  // not a change at all
}

std::vector<std::string> secret_paths(const review::RiskContext& ctx) {
    std::vector<std::string> out;
    for (const auto& [path, hit] : ctx.secrets) out.push_back(path);
    return out;
}

}  // namespace

TEST_CASE("risk scan: the walk reads each changed file as it meets it, and finds what reading by path finds",
          "[risk-scan]") {
    WalkCase w;
    std::multiset<std::string> read_before;
    review::RiskContext expect = w.by_path(w.scan(true, nullptr), &read_before);
    CHECK(read_before == std::multiset<std::string>{"edit.env", "kept.env", "new.env", "newdir/deep.env", "plain.txt"});
    REQUIRE(secret_paths(expect) == std::vector<std::string>{"edit.env", "new.env", "newdir/deep.env"});
    for (bool summary_only : {true, false}) {
        review::WalkRiskReader walk;
        auto changes = w.scan(summary_only, &walk);
        using R = Change::Read;
        CHECK(read_of(changes, "kept.env") == R::Free);  // the old side took the secret away
        CHECK(read_of(changes, "plain.txt") == R::Free);
        CHECK(read_of(changes, "edit.env") == R::Risky);
        CHECK(read_of(changes, "new.env") == R::Risky);
        CHECK(read_of(changes, "newdir/deep.env") == R::Risky);
        CHECK(read_of(changes, "node_modules/x/i.js") == R::NotRead);
        std::multiset<std::string> read_after;
        review::RiskContext got;
        review::add_content_risks(
            &got, changes,
            [&](const std::string& path) -> std::optional<std::string> {
                read_after.insert(path);
                return std::nullopt;
            },
            [](const std::string&) -> std::optional<std::string> { return std::nullopt; }, nullptr, &walk);
        CHECK(read_after.empty());  // nothing read twice
        CHECK(got.content == expect.content);
        CHECK(secret_paths(got) == secret_paths(expect));  // in change order
    }
}

TEST_CASE("risk scan: files the walk read clean are remembered, and not read by the next walk", "[risk-scan]") {
    WalkCase w;
    int64_t start = int64_t{1} << 62;  // long after the files' ctimes: not racy
    capture::VerdictCache first(start);
    review::WalkRiskReader walk1;
    auto changes = w.scan(true, &walk1, &first);
    review::RiskContext ctx;
    auto none = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    review::add_content_risks(&ctx, changes, none, none, &first, &walk1);
    capture::VerdictCache second(start);
    second.parse(first.serialize());
    CHECK(second.peek("plain.txt").known);
    CHECK(second.peek("kept.env").known);
    CHECK_FALSE(second.peek("new.env").known);  // a risky file is read each time
    review::WalkRiskReader walk2;
    auto again = w.scan(true, &walk2, &second);
    for (const auto& c : again) {
        if (c.path != "plain.txt" && c.path != "kept.env") continue;
        CHECK(c.risk_free_cached);
        CHECK(c.content_read == Change::Read::NotRead);
    }
    CHECK(read_of(again, "new.env") == Change::Read::Risky);
    review::RiskContext later;
    review::add_content_risks(&later, again, none, none, &second, &walk2);
    CHECK(later.content == ctx.content);
    CHECK(secret_paths(later) == secret_paths(ctx));
}
