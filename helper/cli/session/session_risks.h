// The risk marks of a session's changes, read from its two trees (the upper
// layer against the real target): `status` and the warning `save` prints.
// `verdicts`: status's cache of risk-free files (review/prompt/risk_scan.h).
#pragma once
#include <memory>
#include <vector>

#include "capture/scan/caches/verdicts.h"
#include "capture/scan/entry/change.h"
#include "capture/scan/entry/step_range.h"
#include "capture/scan/walk/session_scan.h"
#include "helper/store/session/session.h"
#include "review/prompt/risk.h"
#include "review/prompt/risk_scan.h"

// `walk`: the reader the scan read files with (status), whose finds it takes.
// `opened`: the trees the scan walked (StatusCache::trees), else opened here.
review::RiskContext session_risks(const session::Info& info, const std::vector<capture::Change>& changes,
                                  const capture::StepRange& range = {}, capture::VerdictCache* verdicts = nullptr,
                                  review::WalkRiskReader* walk = nullptr,
                                  std::shared_ptr<capture::SessionTrees> opened = nullptr);
