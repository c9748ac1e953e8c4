#include "review/prompt/secrets.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "helper/base/log2.h"
#include "review/prompt/needles.h"

namespace review {

namespace {

// One match inside a line: where, how long, and how much of it may be shown.
struct Span {
    size_t start = 0, length = 0, keep = 0;
};

enum class Set { Upper, Alnum, Word, WordDash };  // [A-Z0-9] [A-Za-z0-9] [A-Za-z0-9_] [A-Za-z0-9_-]

bool in_set(char ch, Set s) {
    bool digit = ch >= '0' && ch <= '9', up = ch >= 'A' && ch <= 'Z', low = ch >= 'a' && ch <= 'z';
    switch (s) {
        case Set::Upper: return digit || up;
        case Set::Alnum: return digit || up || low;
        case Set::Word: return digit || up || low || ch == '_';
        case Set::WordDash: return digit || up || low || ch == '_' || ch == '-';
    }
    return false;
}

bool word_char(char ch) { return in_set(ch, Set::WordDash); }

// A fixed-format token: one of `prefixes`, then between min and max
// characters of `body`, standing alone (no word character either side).
struct TokenFormat {
    const char* prefixes[6];
    Set body;
    size_t min, max;
};

void find_tokens(std::string_view line, const TokenFormat& f, std::vector<Span>* out) {
    for (const char* p : f.prefixes) {
        if (!p) break;
        size_t plen = std::strlen(p);
        for (size_t at = line.find(p); at != std::string_view::npos; at = line.find(p, at + 1)) {
            if (at > 0 && word_char(line[at - 1])) continue;
            size_t end = at + plen;
            while (end < line.size() && in_set(line[end], f.body) && end - at - plen <= f.max) end++;
            size_t n = end - at - plen;
            if (n < f.min || n > f.max) continue;
            if (end < line.size() && word_char(line[end])) continue;
            out->push_back({at, end - at, plen});
        }
    }
}

double entropy(std::string_view s) {
    int counts[256] = {};
    for (unsigned char ch : s) counts[ch]++;
    double h = 0;
    for (int n : counts)
        if (n) {
            double p = static_cast<double>(n) / static_cast<double>(s.size());
            h -= p * base::log2(p);
        }
    return h;
}

// Does the name hold KEY, TOKEN, SECRET or PASSWORD as a word of its own
// (API_KEY, apiKey, db-password, SECRET), not inside one (keywords, tokens,
// Keychain, sort_keys is "keys")? Words split at _ - . and lower-to-upper.
bool secret_name(std::string_view name) {
    auto upper = [](char ch) { return ch >= 'a' && ch <= 'z' ? static_cast<char>(ch - 'a' + 'A') : ch; };
    auto is_word = [&](size_t from, size_t to) {
        static const char* const kWords[] = {"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD"};
        for (const char* w : kWords) {
            size_t n = std::strlen(w);
            if (to - from != n) continue;
            bool same = true;
            for (size_t k = 0; k < n && same; k++) same = upper(name[from + k]) == w[k];
            if (same) return true;
        }
        return false;
    };
    size_t from = 0;
    for (size_t i = 0; i <= name.size(); i++) {
        bool cut = i == name.size() || name[i] == '_' || name[i] == '-' || name[i] == '.';
        bool camel = !cut && i > 0 && name[i] >= 'A' && name[i] <= 'Z' && name[i - 1] >= 'a' && name[i - 1] <= 'z';
        if (!cut && !camel) continue;
        if (i > from && is_word(from, i)) return true;
        from = cut ? i + 1 : i;
    }
    return false;
}

// A value's characters: what keys and tokens are written with. Code
// (calls, indexing, operators, spaces) is never one.
bool value_char(char ch) {
    return in_set(ch, Set::WordDash) || ch == '+' || ch == '/' || ch == '=' || ch == '.' || ch == '~';
}

// The names of the AWS credentials file (~/.aws/credentials, INI), whose
// values are written bare after ` = `.
bool aws_credential_name(std::string_view name) {
    auto same = [&](const char* w) {
        size_t n = std::strlen(w);
        if (name.size() != n) return false;
        for (size_t k = 0; k < n; k++)
            if ((name[k] >= 'A' && name[k] <= 'Z' ? name[k] - 'A' + 'a' : name[k]) != w[k]) return false;
        return true;
    };
    return same("aws_secret_access_key") || same("aws_session_token");
}

// NAME=VALUE (optionally `export NAME=VALUE`; `NAME = "VALUE"` only quoted,
// as TOML and INI write it, or bare for the AWS credentials file's names)
// whose name says KEY, TOKEN, SECRET or PASSWORD
// and whose value is at least 16 key characters, mixes letters and digits
// or cases, and looks random.
void find_env_secret(std::string_view line, std::vector<Span>* out) {
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos) return;
    if (line.compare(i, 7, "export ") == 0) i = line.find_first_not_of(' ', i + 7);
    if (i == std::string_view::npos) return;
    size_t name_start = i;
    while (i < line.size() && (in_set(line[i], Set::Word) || line[i] == '.' || line[i] == '-')) i++;
    std::string_view name = line.substr(name_start, i - name_start);
    if (name.empty() || (name[0] >= '0' && name[0] <= '9') || !secret_name(name)) return;
    bool spaced = i < line.size() && line[i] == ' ';
    while (i < line.size() && line[i] == ' ') i++;
    if (i >= line.size() || line[i] != '=') return;
    i++;
    while (i < line.size() && line[i] == ' ') {
        spaced = true;
        i++;
    }
    char quote = i < line.size() && (line[i] == '"' || line[i] == '\'') ? line[i] : 0;
    // `key = compute(x)`, `token = other_name`: code, not an assignment of a literal.
    if (spaced && !quote && !aws_credential_name(name)) return;
    if (quote) i++;
    size_t v0 = i;
    while (i < line.size() && value_char(line[i])) i++;
    std::string_view value = line.substr(v0, i - v0);
    // The value ends the assignment: at the closing quote, or (bare) at the line's end or a comment.
    if (quote ? (i >= line.size() || line[i] != quote)
              : (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' && line[i] != '#'))
        return;
    if (value.size() < 16) return;
    bool up = false, low = false, digit = false;
    for (char ch : value) {
        up = up || (ch >= 'A' && ch <= 'Z');
        low = low || (ch >= 'a' && ch <= 'z');
        digit = digit || (ch >= '0' && ch <= '9');
    }
    if (up + low + digit < 2 || entropy(value) < 3.3) return;
    out->push_back({name_start, i - name_start, static_cast<size_t>(value.data() - line.data()) - name_start});
}

// "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE KEY-----", ...
void find_private_key(std::string_view line, std::vector<Span>* out) {
    size_t at = line.find("-----BEGIN ");
    if (at == std::string_view::npos) return;
    size_t end = line.find("PRIVATE KEY-----", at);
    if (end == std::string_view::npos || end - at > 40) return;
    out->push_back({at, end + 16 - at, end + 16 - at});  // the armour line holds no secret itself
}

// A JSON Web Token: three base64url parts, the first two JSON objects ("eyJ").
void find_jwt(std::string_view line, std::vector<Span>* out) {
    for (size_t at = line.find("eyJ"); at != std::string_view::npos; at = line.find("eyJ", at + 1)) {
        if (at > 0 && word_char(line[at - 1])) continue;
        size_t i = at;
        int parts = 0;
        for (; parts < 3; parts++) {
            size_t s = i;
            while (i < line.size() && in_set(line[i], Set::WordDash)) i++;
            if (i - s < 8 || (parts < 2 && line.compare(s, 3, "eyJ") != 0)) break;
            if (parts < 2) {
                if (i >= line.size() || line[i] != '.') break;
                i++;
            }
        }
        if (parts == 3) out->push_back({at, i - at, 3});
    }
}

struct Rule {
    const char* kind;
    TokenFormat token;                                    // used when match is null
    void (*match)(std::string_view, std::vector<Span>*);  // a rule of its own shape
};

// The rules. Formats as their issuers document them.
const Rule kRules[] = {
    {"private key", {}, find_private_key},
    {"AWS access key id", {{"AKIA", "ASIA", "ABIA", "ACCA"}, Set::Upper, 16, 16}, nullptr},
    {"GitHub token", {{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, Set::Alnum, 36, 255}, nullptr},
    {"GitHub token", {{"github_pat_"}, Set::Word, 70, 255}, nullptr},
    {"GitLab token", {{"glpat-"}, Set::WordDash, 20, 255}, nullptr},
    {"Slack token", {{"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-"}, Set::WordDash, 10, 255}, nullptr},
    {"Anthropic API key", {{"sk-ant-"}, Set::WordDash, 32, 255}, nullptr},
    {"OpenAI API key", {{"sk-proj-", "sk-svcacct-", "sk-admin-"}, Set::WordDash, 32, 255}, nullptr},
    {"OpenAI API key", {{"sk-"}, Set::Alnum, 40, 64}, nullptr},
    {"Google API key", {{"AIza"}, Set::WordDash, 35, 35}, nullptr},
    {"JSON web token", {}, find_jwt},
    {".env secret", {}, find_env_secret},
};

struct LineHit {
    Span span;
    const char* kind;
};

constexpr size_t kRuleCount = sizeof kRules / sizeof kRules[0];
static_assert(kRuleCount <= 64, "NeedleGroups holds 64 groups");
using Active = std::array<bool, kRuleCount>;

// The strings whose presence turns each rule on (the env rule also needs a '=').
const char* const kSecretWords[] = {"KEY",    "Key",    "key",    "TOKEN",    "Token",    "token",
                                    "SECRET", "Secret", "secret", "PASSWORD", "Password", "password"};

NeedleGroups rule_triggers() {
    std::vector<std::vector<std::string>> groups(kRuleCount);
    for (size_t r = 0; r < kRuleCount; r++) {
        const Rule& rule = kRules[r];
        if (rule.match == find_private_key) groups[r] = {"PRIVATE KEY-----"};
        else if (rule.match == find_jwt) groups[r] = {"eyJ"};
        else if (rule.match == find_env_secret) groups[r].assign(std::begin(kSecretWords), std::end(kSecretWords));
        else
            for (const char* p : rule.token.prefixes)
                if (p) groups[r].push_back(p);
    }
    return NeedleGroups(groups);
}

// Which rules can match anywhere in `text` at all: one pass over it, so that
// the line by line pass runs only those (most files hold no trigger).
Active active_rules(std::string_view text) {
    static const NeedleGroups triggers = rule_triggers();
    uint64_t found = triggers.present(text);
    Active on{};
    for (size_t r = 0; r < kRuleCount; r++) {
        on[r] = (found >> r) & 1;
        if (on[r] && kRules[r].match == find_env_secret) on[r] = text.find('=') != std::string_view::npos;
    }
    return on;
}

bool any_active(const Active& a) {
    for (bool b : a)
        if (b) return true;
    return false;
}

// Every active rule over one line; a span inside one already found is not counted twice.
std::vector<LineHit> scan_line(std::string_view line, const Active& active) {
    std::vector<LineHit> hits;
    for (size_t ri = 0; ri < kRuleCount; ri++) {
        if (!active[ri]) continue;
        const Rule& r = kRules[ri];
        std::vector<Span> spans;
        if (r.match) r.match(line, &spans);
        else find_tokens(line, r.token, &spans);
        for (const auto& s : spans) {
            bool inside = false;
            for (const auto& h : hits)
                inside = inside || (s.start >= h.span.start && s.start + s.length <= h.span.start + h.span.length) ||
                         (h.span.start >= s.start && h.span.start + h.span.length <= s.start + s.length);
            if (!inside) hits.push_back({s, r.kind});
        }
    }
    return hits;
}

}  // namespace

bool scannable_text(std::string_view t) {
    return t.size() <= kSecretScanMax && t.substr(0, 8000).find('\0') == std::string_view::npos;
}

std::vector<SecretHit> find_secrets(std::string_view text, std::string_view old_text) {
    if (!scannable_text(text)) return {};
    return find_secrets_scannable(text, old_text);
}

std::vector<SecretHit> find_secrets_scannable(std::string_view text, std::string_view old_text) {
    std::vector<SecretHit> out;
    Active active = active_rules(text);
    if (!any_active(active)) return out;
    size_t line_no = 1;
    for (size_t pos = 0; pos < text.size(); line_no++) {
        size_t nl = text.find('\n', pos);
        size_t end = nl == std::string_view::npos ? text.size() : nl;
        std::string_view line = text.substr(pos, end - pos);
        for (const auto& h : scan_line(line, active)) {
            std::string_view secret = line.substr(h.span.start, h.span.length);
            if (!old_text.empty() && old_text.find(secret) != std::string_view::npos) continue;  // was there before
            size_t keep = std::min<size_t>(h.span.keep, 40);
            std::string shown;  // a key's armour is shown by kind only: its bytes are the file's
            if (keep < secret.size()) shown = std::string(secret.substr(0, keep)) + "…";
            out.push_back({line_no, pos + h.span.start, h.span.length, h.kind, shown});
        }
        if (nl == std::string_view::npos) break;
        pos = nl + 1;
    }
    return out;
}

std::string secret_phrase(const SecretHit& h) {
    std::string s = h.kind + " on line " + std::to_string(h.line);
    if (!h.shown.empty() && h.kind != "private key") s += " (" + h.shown + ")";
    return s;
}

std::string mask_secrets(std::string_view text) {
    Active active = active_rules(text);
    if (!any_active(active)) return std::string(text);
    std::string out;
    out.reserve(text.size());
    bool in_key = false;  // between a private key's BEGIN and END lines
    for (size_t pos = 0; pos < text.size();) {
        size_t nl = text.find('\n', pos);
        size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
        std::string_view line = text.substr(pos, end - pos);
        pos = end;
        // A diff line's marker does not stop a NAME=VALUE line from matching.
        size_t skip = !line.empty() && (line[0] == '+' || line[0] == '-' || line[0] == ' ') ? 1 : 0;
        if (in_key && line.find("-----END ") == std::string_view::npos) {
            out += std::string(line.substr(0, skip)) + "…" + (line.back() == '\n' ? "\n" : "");
            continue;
        }
        in_key = false;
        std::string_view content = line.substr(skip);
        if (!content.empty() && content.back() == '\n') content.remove_suffix(1);
        auto hits = scan_line(content, active);
        std::sort(hits.begin(), hits.end(),
                  [](const LineHit& a, const LineHit& b) { return a.span.start < b.span.start; });
        size_t at = 0;
        std::string masked;
        for (const auto& h : hits) {
            if (h.span.keep >= h.span.length) {  // a key's armour: the lines after it are the secret
                in_key = true;
                continue;
            }
            size_t s = skip + h.span.start;
            if (s < at) continue;
            masked.append(line.substr(at, s + h.span.keep - at));
            masked += "…";
            at = s + h.span.length;
        }
        masked.append(line.substr(at));
        out += masked;
    }
    return out;
}

}  // namespace review
