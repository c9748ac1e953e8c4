// Secrets an agent wrote into text: private key blocks, tokens with a
// documented fixed format, and .env-style NAME=VALUE lines whose name says
// KEY, TOKEN, SECRET or PASSWORD and whose value looks random. One table of
// rules (secrets.cc), pure, each rule unit-tested both ways. What is
// reported never holds the secret: its kind, line and a short prefix.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace review {

struct SecretHit {
    size_t line = 0;    // 1-based
    size_t start = 0;   // byte offset of the secret in the text
    size_t length = 0;  // its length in bytes
    std::string kind;   // "GitHub token", "private key", ...
    std::string shown;  // a masked prefix safe to print: "ghp_…", "API_KEY=…"
};

// Files bigger than this, or binary (a NUL in the first 8000 bytes), are not scanned.
constexpr size_t kSecretScanMax = 1 << 20;
bool scannable_text(std::string_view text);  // within kSecretScanMax and not binary

// The secrets in `text` that `old_text` (the file before the change; empty
// for a new file) does not already hold: only what the change wrote.
std::vector<SecretHit> find_secrets(std::string_view text, std::string_view old_text = {});
// The same, of a text already known scannable_text() (content_risks: each
// changed file's first 8,000 bytes are not searched for a NUL twice).
std::vector<SecretHit> find_secrets_scannable(std::string_view text, std::string_view old_text);

// "GitHub token on line 3 (ghp_…)": the risk phrase for one hit.
std::string secret_phrase(const SecretHit& h);

// `text` with every secret's bytes after its shown prefix replaced by "…"
// (the MCP diff result: an agent's transcript must not carry them).
std::string mask_secrets(std::string_view text);

}  // namespace review
