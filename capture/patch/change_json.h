// Changes and base records as JSON objects, written straight into a string
// with base::json's writer (the manifest, the sums, `status --json`).
#pragma once
#include <string>

#include "capture/scan/entry/change.h"

namespace capture::jsontext {

// One change object ({...}); full adds mtime_ns and xattrs (the manifest).
void change(std::string* out, const Change& c, bool full);
// One base record object.
void base_entry(std::string* out, const BaseEntry& b);

}  // namespace capture::jsontext
