// Joining strings without libstdc++'s rvalue operator+ (see cat below).
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>

namespace base {

// The parts joined into one string, sized once: for messages that would be
// std::string(a) + "b" + c. That chain inlines libstdc++'s rvalue operator+,
// where g++ 12 reports false -Warray-bounds when the standard headers come
// from a PCH (it loses libstdc++'s diagnostic pragmas, GCC PR 64117), and
// the Makefile then compiles the file a second time without the PCH
// (docs/design.md, "How `make test` runs").
std::string cat(std::initializer_list<std::string_view> parts);

}  // namespace base
