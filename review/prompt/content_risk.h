// Risks only a file's content shows (pure): secrets the change wrote, npm
// scripts npm runs by itself, VS Code tasks run on folder open and terminal
// or interpreter paths in its settings.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "review/prompt/secrets.h"

namespace review {

struct ContentRisks {
    std::vector<std::string> phrases;  // short, as risks_of's ("postinstall script (npm runs it)")
    std::vector<SecretHit> secrets;    // each also among the phrases
};

// Is the file's content read at all? Not under site-packages/,
// dist-packages/ or node_modules/: installed packages, not text the agent
// wrote (their .pth files and hooks are flagged by path), and far too many.
bool content_scanned(const std::string& path);

// `path` relative to the target; old_text empty for a new file. Text only:
// binary or bigger than kSecretScanMax, nothing is found.
ContentRisks content_risks(const std::string& path, std::string_view new_text, std::string_view old_text);

}  // namespace review
