// Precompiled for the unit tests (Makefile, UNIT_PCH): Catch2's single
// header, included first by every test file but main.cc (no #pragma once:
// the file is compiled as a main file; Catch2 has its own include guard).
#include <catch2/catch.hpp>
