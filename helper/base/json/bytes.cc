#include "helper/base/json/bytes.h"

#include "helper/base/text.h"

namespace base::json {

void put_bytes(nlohmann::json& obj, const std::string& key, std::string_view raw) {
    std::string s(raw);
    if (base::is_utf8(s)) {
        obj[key] = s;
        return;
    }
    obj[key] = base::display_path(s);
    obj[key + "_b64"] = base::base64_encode(s);
}

nlohmann::json path_object(std::string_view raw) {
    nlohmann::json o = nlohmann::json::object();
    put_bytes(o, "path", raw);
    return o;
}

}  // namespace base::json
