#include "helper/base/result.h"

#include <cerrno>
#include <cstring>

namespace base {

Error sys_error(const std::string& what, int err) { return Error{what + ": " + std::strerror(err), err}; }

Error sys_error(const std::string& what) { return sys_error(what, errno); }

Error error(const std::string& message) { return Error{message, 0}; }

}  // namespace base
