// The seccomp policy of the command, as data (pure; compiled to BPF by
// seccomp.cc with libseccomp). Default allow; each rule denies one syscall,
// optionally only when (argument & mask) == value.
#pragma once
#include <cstdint>
#include <vector>

struct SeccompRule {
    const char* syscall;  // name as libseccomp knows it
    int err;              // errno returned: EPERM, or ENOSYS so libc falls back
    int arg = -1;         // -1: always; else the argument the condition tests
    uint64_t mask = 0;
    uint64_t value = 0;
    const char* why = "";
};

const std::vector<SeccompRule>& default_seccomp_rules();
