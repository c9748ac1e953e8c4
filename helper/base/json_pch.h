// Precompiled for the sources that use nlohmann's json (Makefile, pch_of):
// helper/base/std_pch.h's headers plus json.hpp, about 1.5 s of parsing per
// such file. No #pragma once: compiled as a main file.
#include <nlohmann/json.hpp>

#include "helper/base/std_pch.h"
