// Content risks of a change list, read from two trees (the new and the old
// side of each file): fills RiskContext::content, ::secrets and
// ::dir_has_makefile. Used by `status` (a session's upper and lower layers)
// and, through risk_patch.h, by everything that holds a patch.
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "capture/scan/caches/verdicts.h"
#include "capture/scan/entry/change.h"
#include "capture/scan/walk/scan.h"
#include "helper/base/fd.h"
#include "review/prompt/content_risk.h"
#include "review/prompt/risk.h"

namespace review {

// A file's text by path, or nothing (absent, not a regular file, too big).
using TextOf = std::function<std::optional<std::string>(const std::string& path)>;

// status: the content scan done by the walk itself (capture::ScanOptions::
// reader), on its threads, from the fd it stat'ed: one open and one read
// per file. The files it marks Risky keep their risks here until
// add_content_risks takes them, in change order.
class WalkRiskReader : public capture::ContentReader {
public:
    bool wants_path(const std::string& path) const override;
    bool wants(const capture::Change& c) const override;
    capture::Change::Read read(const capture::Change& c, int fd, uint64_t size, int low,
                               const std::string& name) override;
    ContentRisks take(const std::string& path);

private:
    std::mutex mu_;
    std::unordered_map<std::string, ContentRisks> found_;
};

// Scan every added or rewritten regular file of `changes` (on two threads
// when there are many: the TextOf functions must be thread-safe). The old
// side is read only when the new one alone shows a risk: it can only take
// risks away (a secret already there, a script unchanged). A change with
// risk_free_cached (status: the verdict cache knew it) is not read, nor one
// the walk read (Change::content_read: its risks are taken from `walk`);
// `verdicts`, when given, learns the files read now and found free (the
// walk told the cache of those it read free itself: give the scan the same cache).
void add_content_risks(RiskContext* ctx, const std::vector<capture::Change>& changes, const TextOf& new_text,
                       const TextOf& old_text, capture::VerdictCache* verdicts = nullptr,
                       WalkRiskReader* walk = nullptr);

// The same, one change at a time (a patch's contents as they stream by):
// is its content scanned at all, and scan it.
bool content_risk_wanted(const capture::Change& c);
void add_content_risk(RiskContext* ctx, const capture::Change& c, std::string_view now, const TextOf& old_text);

// A regular file beneath `root` (never through a symlink), at most kSecretScanMax bytes.
std::optional<std::string> read_text_beneath(int root, const std::string& rel);
// The same for `name` in the dir `dirfd` (a walk's dir fd).
std::optional<std::string> read_text_at(int dirfd, const std::string& name);

// RiskContext::dir_has_makefile for the tree at `root` (kept open by the probe).
std::function<bool(const std::string&)> makefile_probe(std::shared_ptr<base::Fd> root);
// RiskContext::dir_is_git_repo for the tree at `root` (kept open by the probe).
std::function<bool(const std::string&)> git_repo_probe(std::shared_ptr<base::Fd> root);

// "proj/.env:3: GitHub token (ghp_…)", one per secret found: for refusals and warnings.
std::vector<std::string> secret_lines(const RiskContext& ctx);
// The line of one of ctx.secrets.
std::string secret_line(const std::string& path, const SecretHit& h);

}  // namespace review
