#include "helper/base/title.h"

#include <sys/prctl.h>

#include <cstring>

namespace base {

namespace {
char* g_start = nullptr;
size_t g_size = 0;
}  // namespace

void remember_argv(int argc, char** argv) {
    g_start = nullptr;
    g_size = 0;
    if (argc <= 0 || !argv[0]) return;
    // The kernel lays argv out contiguously: argv[0] up to the NUL after the last one.
    g_start = argv[0];
    g_size = static_cast<size_t>(argv[argc - 1] + std::strlen(argv[argc - 1]) + 1 - argv[0]);
}

void set_title(const char* title) {
    ::prctl(PR_SET_NAME, title);
    if (!g_start || g_size == 0) return;
    std::memset(g_start, 0, g_size);
    std::strncpy(g_start, title, g_size - 1);
}

}  // namespace base
