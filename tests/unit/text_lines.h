// Test text for the diff and hunk tests: lines "l1\n".."lN\n", with some
// replaced ({at, text}: line `at` becomes `text`, which brings its own "\n").
#pragma once
#include <initializer_list>
#include <string>
#include <utility>

inline std::string lines(int n, std::initializer_list<std::pair<int, const char*>> edits = {}) {
    std::string out;
    for (int i = 1; i <= n; i++) {
        std::string l = "l" + std::to_string(i) + "\n";
        for (const auto& [at, text] : edits)
            if (at == i) l = text;
        out += l;
    }
    return out;
}
