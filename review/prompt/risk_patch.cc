#include "review/prompt/risk_patch.h"

#include <fcntl.h>

#include <algorithm>
#include <optional>

#include "review/prompt/content_risk.h"
#include "review/prompt/listing.h"
#include "review/prompt/risk_scan.h"

namespace review {

PatchRiskScan::PatchRiskScan(const capture::Patch& patch, const std::string& target) : man_(patch.manifest()) {
    const std::string& where = target.empty() ? man_.target : target;
    ctx_ = risk_context_for(where);
    root_ = std::make_shared<base::Fd>(::open(where.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (root_->valid()) ctx_.dir_has_makefile = makefile_probe(root_), ctx_.dir_is_git_repo = git_repo_probe(root_);
    for (size_t i = 0; i < man_.changes.size(); i++) {
        const auto& c = man_.changes[i];
        if (content_risk_wanted(c) && (c.kind == capture::Kind::Added || c.kind == capture::Kind::Modified ||
                                       c.kind == capture::Kind::TypeChanged))
            scanned_.emplace(c.path, i);
    }
}

// The file before has streamed by whole and matched its fingerprint:
// read_data checks that before it visits the next member.
void PatchRiskScan::scan_pending() {
    if (!pending_) return;
    const base::Fd& root = *root_;
    add_content_risk(&ctx_, *pending_, buf_, [&root](const std::string& p) -> std::optional<std::string> {
        if (!root.valid()) return std::nullopt;
        return read_text_beneath(root.get(), p);
    });
    pending_ = nullptr;
}

capture::DataSink PatchRiskScan::visit(const capture::Member& m) {
    scan_pending();
    auto it = scanned_.find(m.path);
    if (it == scanned_.end() || m.size > kSecretScanMax) return nullptr;
    pending_ = &man_.changes[it->second];
    buf_.clear();
    return [this](uint64_t offset, const char* data, size_t len) -> base::Result<void> {
        if (offset > buf_.size()) buf_.resize(offset, '\0');
        buf_.replace(offset, std::min<uint64_t>(len, buf_.size() - offset), data, len);
        return base::Ok();
    };
}

void PatchRiskScan::finish() {
    scan_pending();
    // In the manifest's order, as a listing of the changes gives them.
    std::stable_sort(ctx_.secrets.begin(), ctx_.secrets.end(),
                     [this](const auto& a, const auto& b) { return scanned_.at(a.first) < scanned_.at(b.first); });
    complete_ = true;
}

RiskContext risk_context_of_patch(const capture::Patch& patch, const std::string& target) {
    PatchRiskScan scan(patch, target);
    // A patch that cannot be read again is reported by whoever reads it
    // next (diff, apply); the marks then only lack its contents.
    if (!scan.wants_data() || patch.read_data([&](const capture::Member& m) { return scan.visit(m); }).ok())
        scan.finish();
    return std::move(scan.context());
}

}  // namespace review
