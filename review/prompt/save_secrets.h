// save's secret warning, shared by `layover save` and the exit prompt's [s]:
// the secrets a patch carries, by file and line, found in the contents as
// save writes them (no second pass over the session), by the rule status
// and the prompt use (review/prompt/risk_scan.h: the base is read only when
// the new text alone shows a risk).
#pragma once
#include <string>

#include "capture/patch/save.h"

namespace review {

// Sets so->on_content: save_session's `notes` get one line per secret.
void scan_saved_secrets(capture::SaveOptions* so);

// Those notes as a warning on stderr (nothing when there are none).
void warn_saved_secrets(const std::string& lines);

}  // namespace review
