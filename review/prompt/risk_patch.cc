#include "review/prompt/risk_patch.h"

#include <fcntl.h>

#include <map>
#include <memory>

#include "review/prompt/content_risk.h"
#include "review/prompt/listing.h"
#include "review/prompt/risk_scan.h"

namespace review {

RiskContext risk_context_of_patch(const capture::Patch& patch, const std::string& target) {
    const auto& man = patch.manifest();
    const std::string& where = target.empty() ? man.target : target;
    RiskContext ctx = risk_context_for(where);
    std::map<std::string, std::string> content;
    std::map<std::string, const capture::Change*> scanned;
    for (const auto& c : man.changes)
        if (c.type == capture::Type::File && c.size <= kSecretScanMax && content_scanned(c.path) &&
            (c.kind == capture::Kind::Added || c.kind == capture::Kind::Modified ||
             c.kind == capture::Kind::TypeChanged))
            scanned[c.path] = &c;
    if (!scanned.empty()) {
        // A patch that cannot be read again is reported by whoever reads it
        // next (diff, apply); the marks then only lack its contents.
        (void)patch.read_data([&](const capture::Member& m) -> capture::DataSink {
            if (!scanned.count(m.path) || m.size > kSecretScanMax) return nullptr;
            std::string* buf = &content[m.path];
            return [buf](uint64_t offset, const char* data, size_t len) -> base::Result<void> {
                if (offset > buf->size()) buf->resize(offset, '\0');
                buf->replace(offset, std::min<uint64_t>(len, buf->size() - offset), data, len);
                return base::Ok();
            };
        });
    }
    int fd = ::open(where.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    auto root = std::make_shared<base::Fd>(fd);
    if (fd >= 0) ctx.dir_has_makefile = makefile_probe(root);
    add_content_risks(
        &ctx, man.changes,
        [&](const std::string& p) -> std::optional<std::string> {
            auto it = content.find(p);
            if (it == content.end()) return std::nullopt;
            return it->second;
        },
        [&](const std::string& p) -> std::optional<std::string> {
            if (fd < 0) return std::nullopt;
            return read_text_beneath(fd, p);
        });
    return ctx;
}

}  // namespace review
