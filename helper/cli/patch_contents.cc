#include "helper/cli/patch_contents.h"

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "helper/base/text.h"

namespace {

base::Result<void> put(const std::string& s) {
    if (std::fwrite(s.data(), 1, s.size(), stdout) != s.size())
        return base::error("writing the contents to stdout failed (a closed pipe?)");
    return base::Ok();
}

}  // namespace

base::Result<void> print_patch_contents(const capture::Patch& p) {
    using Kind = capture::Member::Kind;
    std::set<std::string> linked;  // file members a hard link member repeats
    for (const auto& m : p.members())
        if (m.kind == Kind::Hardlink) linked.insert(m.link_target);
    std::map<std::string, std::string> kept;  // their bytes, for the links after them
    bool first = true;
    auto entry = [&](const std::string& path, const std::string& data) {
        std::string s = first ? "{\"files\":[" : ",";
        first = false;
        s += "{\"path_b64\":\"" + base::base64_encode(path) + "\",\"data_b64\":\"" + base::base64_encode(data) + "\"}";
        return put(s);
    };
    std::string data;
    const capture::Member* current = nullptr;
    auto flush = [&]() -> base::Result<void> {
        if (!current) return base::Ok();
        TRY_VOID(entry(current->path, data));
        if (linked.count(current->path)) kept[current->path] = data;
        current = nullptr;
        return base::Ok();
    };
    // Members in archive order: each file's data comes in offset order, the
    // holes of a sparse file left as zeros.
    base::Result<void> failed = base::Ok();
    TRY_VOID(p.read_data([&](const capture::Member& m) -> capture::DataSink {
        if (auto f = flush(); !f) failed = f;
        current = &m;
        data.assign(static_cast<size_t>(m.size), '\0');
        return [&](uint64_t off, const char* b, size_t n) -> base::Result<void> {
            std::copy(b, b + n, data.data() + off);
            return base::Ok();
        };
    }));
    TRY_VOID(failed);
    TRY_VOID(flush());
    for (const auto& m : p.members()) {
        if (m.kind != Kind::Hardlink) continue;
        auto it = kept.find(m.link_target);
        if (it != kept.end()) TRY_VOID(entry(m.path, it->second));
    }
    TRY_VOID(put(first ? "{\"files\":[]}\n" : "]}\n"));
    return base::Ok();
}
