// The one rule for a byte string (a path, a link target) in JSON output,
// docs/patch-format.md: "KEY" holds it when it is valid UTF-8, otherwise its
// display form (C-style escapes, for people), and then "KEY_b64" holds the
// exact bytes. base::json::field_bytes writes the same into JSON text; this
// is the form for objects built with nlohmann's DOM.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace base::json {

void put_bytes(nlohmann::json& obj, const std::string& key, std::string_view raw);
// {"path": ..., ["path_b64": ...]}: one entry of a path list.
nlohmann::json path_object(std::string_view raw);

}  // namespace base::json
