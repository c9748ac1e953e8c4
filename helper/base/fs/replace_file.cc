#include "helper/base/fs/replace_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "helper/base/defer.h"
#include "helper/base/fault.h"
#include "helper/base/fd.h"

namespace base {

Result<void> replace_file(const std::string& path, const std::string& tmp, std::string_view text,
                          const std::string& what) {
    TRY(Fd fd, open_at(AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600));
    Defer remove([&] { ::unlink(tmp.c_str()); });
    TRY_VOID(write_all(fd.get(), text.data(), text.size()));
    TRY_VOID(fault_point("replace", "written"));
    TRY_VOID(fd.close());
    if (::rename(tmp.c_str(), path.c_str()) != 0) return sys_error(what);
    remove.dismiss();
    return Ok();
}

}  // namespace base
