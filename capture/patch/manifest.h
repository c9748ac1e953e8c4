// JSON forms of the change model: the `status --json`/`show --json` objects
// and the patch manifest (.layover/manifest.json). Names are raw bytes: valid
// UTF-8 goes in "path" as is; otherwise "path" holds the display-escaped form
// and "path_b64" the exact bytes (base64), so the encoding is lossless.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "capture/patch/reader.h"
#include "capture/scan/entry/change.h"
#include "helper/base/result.h"

namespace capture {

using json = nlohmann::json;

// The --json array; each change has "risks", short phrases a person should
// read (review/prompt/risk.h), from `risks` (none given: every one empty).
using RisksOf = std::function<std::vector<std::string>(const Change&)>;
// `extra`, when given, returns more fields for a change (", \"key\": ...").
using ExtraOf = std::function<std::string(const Change&)>;
std::string changes_to_json_text(const std::vector<Change>& changes, const RisksOf& risks = nullptr,
                                 const ExtraOf& extra = nullptr);
std::string manifest_to_text(const Manifest& m);
// Parsed in one strict pass, without a document tree (manifest_read.cc).
base::Result<Manifest> manifest_from_text(const std::string& text);
// .layover/sums: (member name as stored, fingerprint) in archive order.
base::Result<std::vector<std::pair<std::string, std::string>>> sums_from_text(const std::string& text);

}  // namespace capture
