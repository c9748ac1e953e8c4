// add_content_risks: which sides it reads, and status's risk-free verdicts.
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <set>

#include "capture/scan/verdicts.h"
#include "review/prompt/risk_scan.h"

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
