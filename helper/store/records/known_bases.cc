#include "helper/store/records/known_bases.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "helper/base/fd.h"
#include "helper/base/fs/replace_file.h"
#include "helper/base/text.h"

namespace session {

namespace {

using json = nlohmann::json;

const char kFile[] = "/known-bases.json";
const char kInherited[] = "/inherited-bases.json";

}  // namespace

std::string known_content(const std::string& fingerprint, uint32_t mode) {
    char m[8];
    std::snprintf(m, sizeof m, "%04o", mode & 07777);
    return fingerprint + "/" + m;
}

std::vector<std::string> partial_known(const std::string& before_fp, uint32_t before_mode, const std::string& after_fp,
                                       uint32_t after_mode) {
    return {known_content(before_fp, before_mode), known_content(after_fp, after_mode)};
}

namespace {

base::Result<KnownBases> read_file(const std::string& dir, const char* name) {
    KnownBases out;
    std::string file = dir + name;
    auto fd = base::open_at(AT_FDCWD, file, O_RDONLY | O_NOFOLLOW);
    if (!fd) {
        if (fd.error().code == ENOENT) return out;
        return fd.error();
    }
    auto read = base::read_all(fd->get(), 64u << 20);
    if (!read) {
        if (read.error().code) return base::sys_error("reading " + file, read.error().code);
        return base::error(file + " is too large; remove it");
    }
    const std::string& text = read.value();
    auto bad = [&] {
        return base::error(file + " is malformed; remove it (the session's next apply may then report stale copies)");
    };
    json j = json::parse(text, nullptr, false);
    if (!j.is_object() || !j.contains("files") || !j["files"].is_array()) return bad();
    for (const auto& f : j["files"]) {
        if (!f.is_object() || !f.contains("path_hex") || !f["path_hex"].is_string() || !f.contains("fingerprints") ||
            !f["fingerprints"].is_array())
            return bad();
        std::string path;
        if (!base::from_hex(f["path_hex"].get<std::string>(), &path)) return bad();
        for (const auto& fp : f["fingerprints"]) {
            if (!fp.is_string()) return bad();
            out[path].insert(fp.get<std::string>());
        }
    }
    return out;
}

base::Result<void> write_file(const std::string& dir, const char* name, const KnownBases& known) {
    json files = json::array();
    for (const auto& [p, fps] : known) files.push_back({{"path_hex", base::to_hex(p)}, {"fingerprints", fps}});
    json j = {{"format", "layover-known-bases/1"}, {"files", files}};
    std::string text = j.dump(1) + "\n";
    std::string file = dir + name;
    return base::replace_file(file, dir + "/." + std::string(name + 1) + ".tmp", text, "saving " + file);
}

}  // namespace

base::Result<KnownBases> read_known_bases(const std::string& dir) { return read_file(dir, kFile); }

base::Result<void> inherit_known_bases(const std::string& from, const std::string& to) {
    TRY(KnownBases all, read_file(from, kFile));
    TRY(KnownBases more, read_file(from, kInherited));
    for (auto& [path, fps] : more) all[path].insert(fps.begin(), fps.end());
    if (all.empty()) return base::Ok();
    return write_file(to, kInherited, all);
}

base::Result<void> add_known_bases(const std::string& dir, const std::string& path,
                                   const std::vector<std::string>& fingerprints) {
    KnownBases more;
    more[path].insert(fingerprints.begin(), fingerprints.end());
    return add_known_bases(dir, more);
}

base::Result<void> add_known_bases(const std::string& dir, const KnownBases& more) {
    if (more.empty()) return base::Ok();
    TRY(KnownBases known, read_known_bases(dir));
    bool added = false;  // an apply's second call (after its commit) adds nothing: no write
    for (const auto& [path, fps] : more)
        for (const auto& fp : fps) added |= known[path].insert(fp).second;
    return added ? write_file(dir, kFile, known) : base::Ok();
}

const KnownBases* KnownBasesOnce::get() const {
    std::call_once(once_, [this] {
        auto r = read_known_bases(dir_);
        if (r) known_ = std::move(r.value());
    });
    return known_ ? &*known_ : nullptr;
}

const std::set<std::string>* KnownBasesOnce::gone_evidence(const std::string& path) const {
    if (const KnownBases* own = get()) {
        auto it = own->find(path);
        if (it != own->end()) return &it->second;
    }
    std::call_once(inherited_once_, [this] {
        auto r = read_file(dir_, kInherited);
        if (r) inherited_ = std::move(r.value());
    });
    auto it = inherited_.find(path);
    return it == inherited_.end() ? nullptr : &it->second;
}

}  // namespace session
