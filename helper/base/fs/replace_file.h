// A small file replaced whole (metadata, records, refs): written to a temp
// file next to it, then renamed over it, so a reader sees the old or the new
// text, never a part. On every failure (ENOSPC while writing, a failed
// close or rename) the temp file is removed: a full disk leaves no empty
// `.meta.json.tmp` behind.
#pragma once
#include <string>
#include <string_view>

#include "helper/base/result.h"

namespace base {

// `text` into `path` through `tmp` (created 0600, O_NOFOLLOW). `what`: the
// rename failure's context ("saving ..."). Fault point "replace:written"
// (helper/base/fault.h) fails it after the write, for the tests.
Result<void> replace_file(const std::string& path, const std::string& tmp, std::string_view text,
                          const std::string& what);

}  // namespace base
