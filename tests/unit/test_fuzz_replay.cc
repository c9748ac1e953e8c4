// `make test` replays the committed fuzz corpora and crashers
// (tests/fuzz/corpus/TARGET/, tests/fuzz/crashers/TARGET/) through the same
// entry points the libFuzzer binaries run: deterministic, no clang needed.
#include <dirent.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/targets.h"

namespace {

std::vector<std::string> files_in(const std::string& dir) {
    std::vector<std::string> out;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (dirent* e = ::readdir(d))
            if (e->d_name[0] != '.') out.push_back(dir + "/" + e->d_name);
        ::closedir(d);
    }
    return out;
}

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("fuzz: the committed corpora and crashers replay without a failure", "[fuzz]") {
    // Run from the source root (make test does), as the corpora are there.
    REQUIRE(!files_in("tests/fuzz/corpus").empty());
    for (const auto& t : fuzz::kTargets) {
        size_t n = 0;
        for (const char* kind : {"corpus", "crashers"}) {
            for (const auto& f : files_in(std::string("tests/fuzz/") + kind + "/" + t.name)) {
                INFO(f);
                std::string data = slurp(f);
                CHECK(t.fn(reinterpret_cast<const uint8_t*>(data.data()), data.size()) == 0);
                n++;
            }
        }
        INFO(t.name);
        CHECK(n > 0);
    }
}
