// Capture reading a session's layer stack in place (capture/scan/layers/stack.h):
// the pure merge of the layers' listings, and a scan of a stack against the
// scan of the same stack flattened into one upper (steps::flatten).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "capture/scan/layers/layer_index.h"
#include "capture/scan/walk/scan.h"
#include "helper/base/fd.h"
#include "helper/store/layers/layer_merge.h"
#include "helper/store/layers/steps.h"
#include "tests/unit/capture_scan_util.h"

namespace {

std::vector<base::DirEntry> listing(std::initializer_list<std::pair<const char*, unsigned char>> es) {
    std::vector<base::DirEntry> out;
    for (const auto& [n, t] : es) out.push_back(base::DirEntry{n, t});
    return out;
}

std::string describe(const capture::ScanResult& r) {
    std::string out;
    for (const auto& it : r.items) {
        const auto& c = it.change;
        out += c.path + " " + std::to_string(static_cast<int>(c.kind)) + " t" +
               std::to_string(static_cast<int>(c.type)) + " o" + std::to_string(static_cast<int>(c.old_type)) + " m" +
               std::to_string(c.mode) + " s" + std::to_string(c.size) + (it.whiteout ? " wh" : "") +
               (it.opaque ? " opq" : "") + (c.captured ? "" : " uncaptured") + " " + c.link_target + "\n";
    }
    for (const auto& b : r.base) out += "base " + b.path + (b.absent ? " absent" : "") + " " + b.fingerprint + "\n";
    return out;
}

}  // namespace

TEST_CASE("layers: merged listings keep every name once, the topmost layer's entry first", "[layers]") {
    auto m = layers::merge_listings({listing({{"b", DT_REG}, {"d", DT_DIR}}),
                                     listing({{"a", DT_REG}, {"b", DT_CHR}, {"d", DT_DIR}}),
                                     listing({{"c", DT_LNK}, {"d", DT_REG}})});
    REQUIRE(m.size() == 4);
    CHECK(m[0].entry.name == "a");
    REQUIRE(m[0].holders.size() == 1);
    CHECK(m[0].holders[0].layer == 1);
    CHECK(m[1].entry.name == "b");
    CHECK(m[1].entry.type == DT_REG);  // the topmost holder's entry, not the whiteout below
    REQUIRE(m[1].holders.size() == 2);
    CHECK(m[1].holders[1].layer == 1);
    CHECK(m[1].holders[1].type == DT_CHR);
    CHECK(m[2].entry.name == "c");
    CHECK(m[2].holders[0].layer == 2);
    CHECK(m[3].entry.name == "d");
    REQUIRE(m[3].holders.size() == 3);
    CHECK(m[3].holders[2].type == DT_REG);
    CHECK(layers::merge_listings({}).empty());
    CHECK(layers::merge_listings({listing({}), listing({})}).empty());
}

TEST_CASE("layers: a merged dir takes lower dirs until an opaque dir, a whiteout or a non-dir", "[layers]") {
    layers::Descent plain(false);
    CHECK(plain.joins(layers::Below::Dir));
    CHECK(plain.joins(layers::Below::Dir));
    CHECK_FALSE(plain.cut());  // reaching the bottom is no cut: the real tree shows through
    layers::Descent opaque_below(false);
    CHECK(opaque_below.joins(layers::Below::Dir));
    CHECK(opaque_below.joins(layers::Below::OpaqueDir));  // it joins, and nothing under it does
    CHECK_FALSE(opaque_below.joins(layers::Below::Dir));
    CHECK(opaque_below.cut());
    layers::Descent whiteout_below(false);
    CHECK_FALSE(whiteout_below.joins(layers::Below::Other));
    CHECK_FALSE(whiteout_below.joins(layers::Below::Dir));
    CHECK(whiteout_below.cut());
    layers::Descent top_opaque(true);
    CHECK(top_opaque.done());
    CHECK_FALSE(top_opaque.joins(layers::Below::Dir));
    CHECK(top_opaque.cut());
}

TEST_CASE("layers: a scan of the stack in place equals the scan of it flattened", "[layers]") {
    testtree::TempDir t;
    std::string s = t.path, low = t.path + "/low";
    std::string l1 = s + "/steps/0001", l2 = s + "/steps/0002", up = s + "/upper";
    for (const auto& d : {s + "/steps", l1, l2, up, low}) testtree::make(d, "dir");
    // the real tree
    testtree::make(low + "/d", "dir");
    testtree::make(low + "/d/real", "file:r");
    testtree::make(low + "/o", "dir");
    testtree::make(low + "/o/realchild", "file:rc");
    testtree::make(low + "/gone", "file:g");
    testtree::make(low + "/f", "file:real");
    testtree::make(low + "/keep", "file:same");
    // merged dir: children from every layer over a real dir
    testtree::make(l1 + "/d", "dir");
    testtree::make(l1 + "/d/one", "file:1");
    testtree::make(up + "/d", "dir");
    testtree::make(up + "/d/two", "file:2");
    ::chmod((up + "/d").c_str(), 0711);
    testtree::make(l1 + "/d/deep", "dir");
    testtree::make(l1 + "/d/deep/x", "file:x");
    testtree::make(l2 + "/d", "dir");
    testtree::make(l2 + "/d/deep", "dir");
    testtree::make(l2 + "/d/deep/y", "file:y");
    // made, then deleted: a whiteout over nothing real (dropped)
    testtree::make(l1 + "/tmp", "file:t");
    testtree::make(l2 + "/tmp", "whiteout");
    // a real file deleted in step 1
    testtree::make(l1 + "/gone", "whiteout");
    // a real dir removed in step 2, remade live: opaque, only the live child
    testtree::make(l1 + "/o", "dir");
    testtree::make(l1 + "/o/old", "file:o");
    testtree::make(l2 + "/o", "whiteout");
    testtree::make(up + "/o", "dir");
    testtree::make(up + "/o/new", "file:n");
    // opaque in step 2 over step 1's content
    testtree::make(l1 + "/p", "dir");
    testtree::make(l1 + "/p/hidden", "file:h");
    testtree::make(l2 + "/p", "opaque");
    testtree::make(l2 + "/p/shown", "file:s");
    // a file in step 1, a dir live (replaced)
    testtree::make(l1 + "/q", "file:q");
    testtree::make(up + "/q", "opaque");
    testtree::make(up + "/q/in", "file:i");
    // a later step's file wins; a symlink from an old step
    testtree::make(l1 + "/f", "file:old");
    testtree::make(up + "/f", "file:new");
    testtree::make(l2 + "/ln", "symlink:f");
    // copied up in step 1 unchanged
    testtree::make(l1 + "/keep", "file:same");

    auto flat = steps::flatten(s);
    REQUIRE(flat.ok());
    capture::ScanResult want = scan_dirs(flat.value(), low);
    steps::remove_flat(flat.value());

    auto open = [](const std::string& p) { return base::Fd(::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); };
    base::Fd fu = open(up), f2 = open(l2), f1 = open(l1), fl = open(low);
    capture::ScanOptions o;
    o.with_base = true;
    for (int threads : {1, 2}) {
        o.threads = threads;
        auto got = capture::scan_layers({fu.get(), f2.get(), f1.get()}, fl.get(), o);
        REQUIRE(got.ok());
        CHECK(describe(got.value()) == describe(want));
        // Each file is read from the layer that holds it.
        for (const auto& it : got->items) {
            if (it.change.path == "d/one" || it.change.path == "d/deep/x") CHECK(it.layer == 2);
            if (it.change.path == "d/deep/y" || it.change.path == "ln") CHECK(it.layer == 1);
            if (it.change.path == "f" || it.change.path == "d/two") CHECK(it.layer == 0);
        }
    }
    // The frozen layers read from their indexes (capture/scan/layers/layer_index.h),
    // their dirs not opened: the same changes, from the same layers; also
    // with the top indexed, and for status (no base records, summary only).
    auto i2 = capture::build_layer_index(f2.get()), i1 = capture::build_layer_index(f1.get());
    auto iu = capture::build_layer_index(fu.get());
    REQUIRE((i2.ok() && i1.ok() && iu.ok()));
    REQUIRE(i2->find("p") != nullptr);
    CHECK(i2->find("p")->mark == 'y');
    CHECK(i1->find("d/deep") != nullptr);
    CHECK(i1->find("d/deep/x") == nullptr);  // a file, no dir
    for (bool status : {false, true}) {
        capture::ScanOptions plain;
        plain.with_base = !status;
        plain.summary_only = status;
        plain.threads = 1;
        auto listed = capture::scan_layers({fu.get(), f2.get(), f1.get()}, fl.get(), plain);
        REQUIRE(listed.ok());
        for (bool top : {false, true}) {
            capture::ScanOptions io = plain;
            io.indexes = {top ? &iu.value() : nullptr, &i2.value(), &i1.value()};
            auto got = capture::scan_layers({fu.get(), f2.get(), f1.get()}, fl.get(), io);
            REQUIRE(got.ok());
            CHECK(describe(got.value()) == describe(listed.value()));
            REQUIRE(got->items.size() == listed->items.size());
            for (size_t i = 0; i < got->items.size(); i++) CHECK(got->items[i].layer == listed->items[i].layer);
        }
    }
    // The expected listing itself, so the two cannot agree on nothing.
    std::string d = describe(want);
    CHECK(d.find("d/one ") != std::string::npos);
    CHECK(d.find("p/shown ") != std::string::npos);
    CHECK(d.find("p/hidden") == std::string::npos);
    CHECK(d.find("o/realchild") != std::string::npos);  // deleted: base recorded
    CHECK(d.find("tmp ") == std::string::npos);
    CHECK(d.find("gone ") != std::string::npos);
}
