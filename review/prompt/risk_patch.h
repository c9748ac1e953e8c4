// The full risk context of a patch (or a session read as one): the path
// rules' context for its target plus what its contents say (secrets, npm
// scripts, editor tasks), the old side read from the real target.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "capture/patch/reader.h"
#include "helper/base/fd.h"
#include "review/prompt/risk.h"

namespace review {

// target: where it would be applied ("" = the patch's own target).
RiskContext risk_context_of_patch(const capture::Patch& patch, const std::string& target = "");

// The same, fed by a pass over the patch's data that someone else makes
// (apply's staging): visit() is called for every file member in archive
// order (Patch::read_data's visitor), each file scanned once its data has
// streamed by, in one reused buffer. finish() after a complete pass;
// complete() says whether it came.
class PatchRiskScan {
public:
    PatchRiskScan(const capture::Patch& patch, const std::string& target);
    capture::DataSink visit(const capture::Member& m);
    void finish();
    bool complete() const { return complete_; }
    bool wants_data() const { return !scanned_.empty(); }  // else finish() alone will do
    RiskContext& context() { return ctx_; }

private:
    void scan_pending();
    const capture::Manifest& man_;
    RiskContext ctx_;
    std::shared_ptr<base::Fd> root_;
    std::unordered_map<std::string_view, size_t> scanned_;  // path -> index in man_.changes
    const capture::Change* pending_ = nullptr;
    std::string buf_;
    bool complete_ = false;
};

}  // namespace review
