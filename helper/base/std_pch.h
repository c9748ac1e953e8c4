// Precompiled for every library and binary source (Makefile, pch_of): the
// standard headers most files include, whose parsing was about half of a
// clean build's compile time. Only standard headers: no layer's own header
// (tests/check_layers.sh), and nlohmann/json.hpp stays out (a 100 MB image
// that the ~85% of files not using it would load for nothing). No #pragma
// once: the file is compiled as a main file; each header has its own guard.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
