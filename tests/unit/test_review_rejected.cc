// Rejections tied to content (review/prompt/rejected.h): a record made now
// holds while the change is the same, follows its hunk when numbers shift,
// and is superseded when the agent changes the file again.
#include <catch2/catch.hpp>
#include <map>

#include "review/diff/algo.h"
#include "review/prompt/rejected.h"
#include "review/prompt/rejected_patch.h"

namespace {

struct Tree {
    std::map<std::string, std::string> files;
    review::SideOf reader() const {
        return [this](const std::string& p) -> base::Result<review::Side> {
            review::Side s;
            auto f = files.find(p);
            if (f == files.end()) return s;
            s.exists = true;
            s.mode = review::kGitRegular;
            s.data = f->second;
            s.size = s.data.size();
            return s;
        };
    }
};

capture::Change modified(const std::string& path) {
    capture::Change c;
    c.path = path;
    c.kind = capture::Kind::Modified;
    c.type = c.old_type = capture::Type::File;
    c.mode = c.old_mode = 0644;
    return c;
}

std::string lines(int n, int changed_a = -1, int changed_b = -1) {
    std::string s;
    for (int i = 0; i < n; i++) s += (i == changed_a || i == changed_b ? "new " : "line ") + std::to_string(i) + "\n";
    return s;
}

}  // namespace

TEST_CASE("rejected: a hunk rejection holds, follows renumbering, and is superseded by a new edit", "[rejected]") {
    Tree real, sess;
    real.files["p/f"] = lines(40);
    sess.files["p/f"] = lines(40, 5, 30);  // two hunks
    std::vector<capture::Change> changes = {modified("p/f")};
    auto r = review::make_rejection("p/f", 2, "keep line 30", "t", changes, sess.reader(), real.reader());
    REQUIRE(r.ok());
    CHECK(r->hunk == 2);
    auto st = review::judge_rejections({r.value()}, changes, sess.reader(), real.reader());
    REQUIRE(st.ok());
    REQUIRE(st->size() == 1);
    CHECK(st->at(0).in_force);
    CHECK(st->at(0).hunk_now == 2);
    CHECK(review::rejection_line(st->at(0)) == "p/f [hunk 2] rejected: keep line 30");

    // Hunk 1 applied to the real file: the rejected hunk is now hunk 1.
    real.files["p/f"] = lines(40, 5);
    st = review::judge_rejections({r.value()}, changes, sess.reader(), real.reader());
    REQUIRE(st.ok());
    CHECK(st->at(0).in_force);
    CHECK(st->at(0).hunk_now == 1);

    // The agent edits the file again: superseded.
    sess.files["p/f"] = lines(40, 5, 31);
    st = review::judge_rejections({r.value()}, changes, sess.reader(), real.reader());
    REQUIRE(st.ok());
    CHECK_FALSE(st->at(0).in_force);
    CHECK(st->at(0).why == "changed since");
    CHECK(review::rejection_line(st->at(0)) == "p/f [hunk 2] rejected (superseded: changed since): keep line 30");
}

TEST_CASE("rejected: a whole rejection holds until the change differs or goes", "[rejected]") {
    Tree real, sess;
    real.files["a"] = "old\n";
    sess.files["a"] = "new\n";
    std::vector<capture::Change> changes = {modified("a")};
    auto r = review::make_rejection("a", 0, "", "t", changes, sess.reader(), real.reader());
    REQUIRE(r.ok());
    CHECK(r->hunk_fingerprint.empty());
    auto st = review::judge_rejections({r.value()}, changes, sess.reader(), real.reader());
    REQUIRE(st.ok());
    CHECK(st->at(0).in_force);
    changes[0].mode = 0755;  // a new mode is a new change
    st = review::judge_rejections({r.value()}, changes, sess.reader(), real.reader());
    CHECK_FALSE(st->at(0).in_force);
    st = review::judge_rejections({r.value()}, {}, sess.reader(), real.reader());
    CHECK(st->at(0).why == "no longer a change");
}

TEST_CASE("rejected: no record for a path that is no change, a missing hunk, or a binary file", "[rejected]") {
    Tree real, sess;
    real.files["t"] = "a\n";
    sess.files["t"] = "b\n";
    real.files["bin"] = std::string("\0x", 2);
    sess.files["bin"] = std::string("\0y", 2);
    std::vector<capture::Change> changes = {modified("t"), modified("bin")};
    capture::Change added;
    added.path = "new";
    added.type = capture::Type::File;
    changes.push_back(added);
    sess.files["new"] = "x\n";
    auto none = review::make_rejection("other", 0, "", "t", changes, sess.reader(), real.reader());
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message.find("is not a change of this session") != std::string::npos);
    auto h = review::make_rejection("t", 2, "", "t", changes, sess.reader(), real.reader());
    REQUIRE_FALSE(h.ok());
    CHECK(h.error().message.find("has 1 hunk, no hunk 2") != std::string::npos);
    auto b = review::make_rejection("bin", 1, "", "t", changes, sess.reader(), real.reader());
    REQUIRE_FALSE(b.ok());
    CHECK(b.error().message.find("it is binary") != std::string::npos);
    auto a = review::make_rejection("new", 1, "", "t", changes, sess.reader(), real.reader());
    REQUIRE_FALSE(a.ok());
    CHECK(a.error().message.find("it is added") != std::string::npos);
    CHECK(review::make_rejection("new", 0, "", "t", changes, sess.reader(), real.reader()).ok());
    CHECK_FALSE(review::make_rejection("t", 0, "two\nlines", "t", changes, sess.reader(), real.reader()).ok());
}

TEST_CASE("rejected: hunk fingerprints ignore position and outer context", "[rejected]") {
    auto a = review::hunk_fingerprints(lines(20), lines(20, 10));
    auto b = review::hunk_fingerprints("extra\n" + lines(20), "extra\n" + lines(20, 10));
    REQUIRE(a.size() == 1);
    REQUIRE(b.size() == 1);
    CHECK(a[0] == b[0]);
    CHECK(review::hunk_fingerprints(lines(20), lines(20, 11))[0] != a[0]);
}

TEST_CASE("rejected: fingerprints taken once from the diff shown make the same record (apply -p's n)", "[rejected]") {
    Tree real, sess;
    real.files["p/f"] = lines(60);
    sess.files["p/f"] = lines(60, 5, 40);  // two hunks
    std::vector<capture::Change> changes = {modified("p/f")};
    auto a = review::split_lines(real.files["p/f"]), b = review::split_lines(sess.files["p/f"]);
    auto groups = review::groups_of(review::diff_lines(a, b));
    auto spans = review::hunk_spans(groups, a.size(), review::kHunkContext);
    review::ChangePrints prints;
    prints.hunks = review::hunk_fingerprints(a, b, groups, spans);
    CHECK(prints.hunks == review::hunk_fingerprints(real.files["p/f"], sess.files["p/f"]));
    REQUIRE(prints.hunks.size() == 2);
    prints.change = review::change_fingerprint(changes[0], sess.reader()("p/f").value());
    for (size_t hunk : {0, 1, 2}) {
        auto plain = review::make_rejection("p/f", hunk, "no", "t", changes, sess.reader(), real.reader());
        auto cached = review::make_rejection("p/f", hunk, "no", "t", changes, sess.reader(), real.reader(), &prints);
        REQUIRE(plain.ok());
        REQUIRE(cached.ok());
        CHECK(cached->fingerprint == plain->fingerprint);
        CHECK(cached->hunk_fingerprint == plain->hunk_fingerprint);
        CHECK(cached->hunk == plain->hunk);
    }
    auto bad = review::make_rejection("p/f", 3, "no", "t", changes, sess.reader(), real.reader(), &prints);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.find("has 2 hunks, no hunk 3") != std::string::npos);
}

TEST_CASE("rejected: each rejection that leaves something out is named once; an unpicked one not at all",
          "[rejected]") {
    auto state = [](const std::string& path, uint32_t hunk) {
        review::RejectionState s;
        s.rec.path = path;
        s.rec.hunk = hunk;
        s.hunk_now = hunk;
        s.in_force = true;
        return s;
    };
    // nd/a lies in the rejected dir nd, f's hunk in f rejected whole: nothing more is left out for them.
    std::vector<review::RejectionState> states = {state("nd", 0), state("nd/a", 0), state("f", 2),
                                                  state("f", 0),  state("h", 0),    state("ndx", 0)};
    std::vector<std::string> superseded;
    review::ApplyOptions ao;
    auto skipped = review::skip_in_force(states, &ao, &superseded);
    CHECK(skipped == std::vector<std::string>{"nd rejected", "f rejected", "h rejected", "ndx rejected"});
    CHECK(ao.exclude.size() == 4);
    CHECK(ao.hunks.empty());

    // A save leaves h out already (the pick's exclude): not counted either.
    Tree real, sess;
    capture::SaveOptions so;
    so.exclude = {"/h"};
    auto left = review::leave_out_rejected(states, sess.reader(), real.reader(), &so, &superseded);
    REQUIRE(left.ok());
    CHECK(left.value() == std::vector<std::string>{"nd rejected", "f rejected", "ndx rejected"});
    CHECK(so.contents.empty());

    // The exit prompt's pick: nd unpicked, so its rejection takes nothing picked beneath it.
    std::vector<capture::Change> changes = {modified("f"), modified("h"), modified("nd"), modified("nd/a")};
    auto picked = review::picked_only(states, changes, {1, 1, 0, 1});
    std::vector<std::string> paths;
    for (const auto& s : picked) paths.push_back(s.rec.path);
    CHECK(paths == std::vector<std::string>{"nd/a", "f", "f", "h", "ndx"});
    review::ApplyOptions ao2;
    CHECK(review::skip_in_force(picked, &ao2, &superseded).size() == 4);  // nd/a now counts: no nd takes it
    CHECK(superseded.empty());
}
