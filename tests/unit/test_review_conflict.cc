#include <catch2/catch.hpp>

#include "review/apply/conflict.h"

using capture::BaseEntry;
using capture::Type;
using review::Observed;

namespace {

BaseEntry file(const std::string& path, uint64_t size, uint32_t mode, const std::string& fp) {
    BaseEntry b;
    b.path = path;
    b.type = Type::File;
    b.size = size;
    b.mode = mode;
    b.fingerprint = fp;
    return b;
}

Observed real_file(const std::string& path, uint64_t size, uint32_t mode, const std::string& fp = "") {
    Observed o;
    o.path = path;
    o.exists = true;
    o.type = Type::File;
    o.size = size;
    o.mode = mode;
    o.fingerprint = fp;
    return o;
}

const std::string A(32, 'a'), B(32, 'b');

}  // namespace

TEST_CASE("review conflict: an unchanged file is no conflict") {
    CHECK(review::compare_entry(file("f", 3, 0644, A), real_file("f", 3, 0644, A)).empty());
}

TEST_CASE("review conflict: content, size, mode, type and existence changes conflict") {
    auto b = file("f", 3, 0644, A);
    CHECK_FALSE(review::compare_entry(b, real_file("f", 3, 0644, B)).empty());
    CHECK_FALSE(review::compare_entry(b, real_file("f", 4, 0644, A)).empty());
    CHECK(review::compare_entry(b, real_file("f", 3, 0600, A)).find("mode") != std::string::npos);
    Observed dir = real_file("f", 0, 0755);
    dir.type = Type::Dir;
    CHECK(review::compare_entry(b, dir).find("type") != std::string::npos);
    Observed gone;
    gone.path = "f";
    CHECK(review::compare_entry(b, gone).find("removed") != std::string::npos);
}

TEST_CASE("review conflict: an added path that now exists conflicts; absent is fine") {
    BaseEntry b;
    b.path = "new";
    b.absent = true;
    Observed gone;
    CHECK(review::compare_entry(b, gone).empty());
    CHECK(review::compare_entry(b, real_file("new", 1, 0644)).find("exists") != std::string::npos);
}

TEST_CASE("review conflict: a stale base is always a conflict, even when everything matches") {
    auto b = file("f", 3, 0644, A);
    b.stale = true;
    CHECK(review::compare_entry(b, real_file("f", 3, 0644, A)).find("stale") != std::string::npos);
}

TEST_CASE("review conflict: symlinks compare by link target fingerprint, not mode") {
    BaseEntry b;
    b.path = "l";
    b.type = Type::Symlink;
    b.mode = 0777;
    b.fingerprint = A;
    Observed o;
    o.exists = true;
    o.type = Type::Symlink;
    o.mode = 0755;
    o.fingerprint = A;
    CHECK(review::needs_fingerprint(b, o));
    CHECK(review::compare_entry(b, o).empty());
    o.fingerprint = B;
    CHECK(review::compare_entry(b, o).find("link target") != std::string::npos);
}

TEST_CASE("review conflict: hashing is only needed when type and size agree") {
    auto b = file("f", 3, 0644, A);
    CHECK(review::needs_fingerprint(b, real_file("f", 3, 0644)));
    CHECK_FALSE(review::needs_fingerprint(b, real_file("f", 4, 0644)));
    Observed gone;
    CHECK_FALSE(review::needs_fingerprint(b, gone));
}

TEST_CASE("review conflict: a deleted directory's real subtree must equal base exactly") {
    std::vector<BaseEntry> base = {file("a", 1, 0644, A), file("sub/b", 1, 0644, B)};
    BaseEntry sub;
    sub.path = "sub";
    sub.type = Type::Dir;
    sub.mode = 0755;
    base.push_back(sub);
    Observed rsub = real_file("sub", 0, 0755);
    rsub.type = Type::Dir;
    std::vector<Observed> same = {real_file("a", 1, 0644, A), rsub, real_file("sub/b", 1, 0644, B)};
    CHECK(review::compare_subtree(base, same).empty());

    auto extra = same;
    extra.push_back(real_file("sub/new", 5, 0644));
    auto c = review::compare_subtree(base, extra);
    REQUIRE(c.size() == 1);
    CHECK(c[0].path == "sub/new");

    auto edited = same;
    edited[2].fingerprint = A;
    c = review::compare_subtree(base, edited);
    REQUIRE(c.size() == 1);
    CHECK(c[0].path == "sub/b");

    std::vector<Observed> missing = {real_file("a", 1, 0644, A), rsub};
    c = review::compare_subtree(base, missing);
    REQUIRE(c.size() == 1);
    CHECK(c[0].path == "sub/b");
}
