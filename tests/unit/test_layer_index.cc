// A frozen layer's kept index (capture/scan/layers/layer_index.h): what a walk of
// the layer finds, its bytes and back, a malformed file read as nothing, and
// the session file kept, reused and rebuilt when a layer is not the same.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "capture/scan/layers/layer_index.h"
#include "helper/base/fd.h"
#include "tests/unit/capture_tree.h"

namespace {

base::Fd open_dir(const std::string& p) { return base::Fd(::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); }

std::string names_of(const capture::LayerIndex::Dir* d) {
    std::string out;
    for (const auto& e : d->names) out += e.name + ":" + std::to_string(e.type) + " ";
    return out;
}

}  // namespace

TEST_CASE("layer index: every dir of a layer, its sorted names and its mark", "[layers]") {
    testtree::TempDir t;
    std::string l = t.path + "/layer";
    testtree::make(l, "dir");
    testtree::make(l + "/b", "file:b");
    testtree::make(l + "/a", "dir");
    testtree::make(l + "/a/x", "file:x");
    testtree::make(l + "/a/sub", "opaque");
    testtree::make(l + "/a/sub/deep", "file:d");
    testtree::make(l + "/gone", "whiteout");
    testtree::make(l + "/ln", "symlink:a");
    base::Fd fd = open_dir(l);
    auto idx = capture::build_layer_index(fd.get());
    REQUIRE(idx.ok());
    CHECK(idx->dirs.size() == 3);  // "", a, a/sub; the symlink is not followed
    REQUIRE(idx->find("") != nullptr);
    CHECK(names_of(idx->find("")) == "a:4 b:8 gone:8 ln:10 ");
    CHECK(names_of(idx->find("a")) == "sub:4 x:8 ");
    CHECK(idx->find("a")->mark == 0);
    CHECK(idx->find("a/sub")->mark == 'y');
    CHECK(idx->find("ln") == nullptr);

    // Its bytes and back.
    std::string bytes = capture::indexes_to_bytes({&idx.value(), &idx.value()});
    auto back = capture::indexes_from_bytes(bytes);
    REQUIRE(back.size() == 2);
    CHECK(back[1].key == idx->key);
    CHECK(back[1].dirs.size() == 3);
    CHECK(names_of(back[1].find("a")) == names_of(idx->find("a")));
    CHECK(back[1].find("a/sub")->mark == 'y');
    // Anything cut short or not made by the writer: nothing at all.
    CHECK(capture::indexes_from_bytes(bytes.substr(0, bytes.size() - 1)).empty());
    CHECK(capture::indexes_from_bytes("x" + bytes).empty());
    for (const char* bad : {"a/b", "..", "."}) {
        capture::LayerIndex odd;
        odd.dirs[""].names.push_back({bad, DT_REG});
        CHECK(capture::indexes_from_bytes(capture::indexes_to_bytes({&odd})).empty());
    }
    capture::LayerIndex unsorted;
    unsorted.dirs[""].names = {{"b", DT_REG}, {"a", DT_REG}};
    CHECK(capture::indexes_from_bytes(capture::indexes_to_bytes({&unsorted})).empty());
    capture::LayerIndex rootless;
    rootless.dirs["a"].names = {{"b", DT_REG}};
    CHECK(capture::indexes_from_bytes(capture::indexes_to_bytes({&rootless})).empty());
}

TEST_CASE("layer index: the session's file is kept, reused, and follows the stack", "[layers]") {
    testtree::TempDir t;
    std::string s = t.path + "/session", l1 = t.path + "/l1", l2 = t.path + "/l2", empty = t.path + "/empty";
    for (const auto& d : {s, l1, l2, empty}) testtree::make(d, "dir");
    testtree::make(l1 + "/f", "file:1");
    testtree::make(l1 + "/sub", "dir");
    testtree::make(l1 + "/sub/f", "file:s");
    testtree::make(l2 + "/g", "file:2");
    base::Fd sd = open_dir(s), f1 = open_dir(l1), f2 = open_dir(l2), fe = open_dir(empty);
    auto got = capture::index_layers(sd.get(), {-1, f2.get(), f1.get(), fe.get()});
    REQUIRE(got.size() == 4);
    CHECK(got[0] == nullptr);  // not frozen
    REQUIRE(got[1] != nullptr);
    REQUIRE(got[2] != nullptr);
    CHECK(got[3] == nullptr);  // an empty layer is never indexed
    CHECK(names_of(got[1]->find("")) == "g:8 ");
    struct stat st;
    REQUIRE(::stat((s + "/layer-index").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    // A new layer (squash, revert: another dir) is indexed; the one gone
    // from the stack is dropped from the file.
    std::string l3 = t.path + "/l3";
    testtree::make(l3, "dir");
    testtree::make(l3 + "/h", "file:3");
    base::Fd f3 = open_dir(l3);
    auto again = capture::index_layers(sd.get(), {f3.get(), f1.get()});
    REQUIRE(again.size() == 2);
    REQUIRE(again[0] != nullptr);
    CHECK(names_of(again[0]->find("")) == "h:8 ");
    {
        base::Fd kf(::open((s + "/layer-index").c_str(), O_RDONLY | O_CLOEXEC));
        auto bytes = base::read_all(kf.get(), 1 << 20);
        REQUIRE(bytes.ok());
        auto in_file = capture::indexes_from_bytes(bytes.value());
        REQUIRE(in_file.size() == 2);  // l3 and l1; l2 dropped
        CHECK((in_file[0].key == again[0]->key || in_file[1].key == again[0]->key));
    }
    // The kept file answers for a layer whose root is the same: a name
    // removed deep inside behind its back (a frozen layer is never written;
    // this test cheats) still shows, which proves the file was read.
    REQUIRE(::unlink((l1 + "/sub/f").c_str()) == 0);
    auto kept = capture::index_layers(sd.get(), {f3.get(), f1.get()});
    REQUIRE(kept[1] != nullptr);
    REQUIRE(kept[1]->find("sub") != nullptr);
    CHECK(names_of(kept[1]->find("sub")) == "f:8 ");
}
