#include <string>

#include "helper/sandbox/rename/rename_call.h"
#include "tests/fuzz/targets.h"

namespace fuzz {

// The C++ side's only IPC message decoders: the supervisor <-> rename worker
// messages. (The REPL's frames are parsed in Python only:
// python/tests/test_py_frames_fuzz.py.) A message decodes in at most one
// way: encoding what was decoded gives back the same bytes.
int ipc(const uint8_t* data, size_t size) {
    std::string msg(reinterpret_cast<const char*>(data), size);
    if (auto r = rename_call::decode_request(msg)) {
        if (rename_call::encode(*r) != msg) __builtin_trap();
        for (const auto* p : {&r->oldpath, &r->newpath}) {
            auto s = rename_call::split(*p);
            if (s.name.find('/') != std::string::npos || s.parent.empty()) __builtin_trap();
        }
    }
    if (auto r = rename_call::decode_reply(msg))
        if (r->err < 0 || rename_call::encode(*r) != msg) __builtin_trap();
    return 0;
}

}  // namespace fuzz
