#include <catch2/catch.hpp>
#include <cstring>

#include "review/prompt/secrets.h"

using review::find_secrets;
using review::mask_secrets;

namespace {

// Random-looking bodies, built at run time so no token-shaped literal sits in
// the source (secret scanners of forges would flag the test itself).
std::string body(size_t n, const char* alphabet = "aB3dE5gH7jK9mN1pQ2sT4vW6yZ8") {
    std::string s;
    size_t k = std::strlen(alphabet);
    for (size_t i = 0; i < n; i++) s.push_back(alphabet[(i * 7 + i / 3) % k]);
    return s;
}

std::string kinds(const std::string& text, const std::string& old = "") {
    std::string out;
    for (const auto& h : find_secrets(text, old)) out += (out.empty() ? "" : ",") + h.kind;
    return out;
}

}  // namespace

TEST_CASE("secrets: private key blocks, not public keys or certificates", "[secrets]") {
    std::string key = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + body(64) + "\n-----END OPENSSH PRIVATE KEY-----\n";
    auto hits = find_secrets("x\n" + key);
    REQUIRE(hits.size() == 1);
    CHECK(hits[0].kind == "private key");
    CHECK(hits[0].line == 2);
    CHECK(kinds("-----BEGIN RSA PRIVATE KEY-----\n") == "private key");
    CHECK(kinds("-----BEGIN PUBLIC KEY-----\n" + body(64) + "\n") == "");
    CHECK(kinds("-----BEGIN CERTIFICATE-----\n") == "");
}

TEST_CASE("secrets: AWS access key ids", "[secrets]") {
    CHECK(kinds("aws_access_key_id = AKIA" + body(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") + "\n") ==
          "AWS access key id");
    CHECK(kinds("ASIA" + body(16, "QWERTYUIOP0123456789")) == "AWS access key id");
    CHECK(kinds("AKIA" + body(15, "ABCDEFGH0123")) == "");   // too short
    CHECK(kinds("AKIA" + body(17, "ABCDEFGH0123")) == "");   // too long
    CHECK(kinds("XAKIA" + body(16, "ABCDEFGH0123")) == "");  // inside a word
}

TEST_CASE("secrets: GitHub tokens, classic and fine-grained", "[secrets]") {
    CHECK(kinds("token: ghp_" + body(36)) == "GitHub token");
    CHECK(kinds("ghs_" + body(36)) == "GitHub token");
    CHECK(kinds("github_pat_" + body(22) + "_" + body(59)) == "GitHub token");
    CHECK(kinds("ghp_" + body(20)) == "");
    CHECK(kinds("github_pat_short") == "");
}

TEST_CASE("secrets: GitLab, Slack tokens", "[secrets]") {
    CHECK(kinds("glpat-" + body(20)) == "GitLab token");
    CHECK(kinds("glpat-abc") == "");
    CHECK(kinds("SLACK=xoxb-1234567890-" + body(24)) == "Slack token");
    CHECK(kinds("xoxb-12") == "");
    CHECK(kinds("xoxz-1234567890-" + body(24)) == "");
}

TEST_CASE("secrets: OpenAI and Anthropic API keys", "[secrets]") {
    CHECK(kinds("sk-ant-api03-" + body(40)) == "Anthropic API key");
    CHECK(kinds("key=\"sk-proj-" + body(48) + "\"") == "OpenAI API key");
    CHECK(kinds("sk-" + body(48)) == "OpenAI API key");
    CHECK(kinds("pip install scikit-learn sk-learn") == "");
    CHECK(kinds("task-" + body(48)) == "");  // "sk-" inside a word
}

TEST_CASE("secrets: Google API keys", "[secrets]") {
    CHECK(kinds("AIza" + body(35)) == "Google API key");
    CHECK(kinds("AIza" + body(20)) == "");
    CHECK(kinds("AIza" + body(36)) == "");
}

TEST_CASE("secrets: JSON web tokens", "[secrets]") {
    std::string jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + body(43);
    CHECK(kinds("Authorization: Bearer " + jwt) == "JSON web token");
    CHECK(kinds("eyJhbGciOiJIUzI1NiJ9") == "");                     // one part
    CHECK(kinds("eyJhbGciOiJIUzI1NiJ9.notjson12.abcdefgh") == "");  // the payload is no JSON object
}

TEST_CASE("secrets: .env NAME=VALUE with a random value", "[secrets]") {
    CHECK(kinds("API_KEY=" + body(32, "0123456789abcdef") + "\n") == ".env secret");
    CHECK(kinds("export DB_PASSWORD='" + body(20) + "'\n") == ".env secret");
    CHECK(kinds("  service.token = \"" + body(24) + "\"") == ".env secret");
    CHECK(kinds("PASSWORD=changeme\n") == "");                           // short
    CHECK(kinds("API_KEY=${API_KEY}\n") == "");                          // a reference
    CHECK(kinds("SECRET_NAME=this_is_a_long_plain_name\n") == "");       // one letter case, no digits
    CHECK(kinds("DATABASE_URL=" + body(32, "0123456789abcdef")) == "");  // the name says nothing
    CHECK(kinds("API_KEY=aaaaaaaaaaaaaaaaaaaa11\n") == "");              // long, but not random
    // The AWS credentials file: INI, its values bare after ` = `.
    CHECK(kinds("[default]\naws_secret_access_key = " + body(40) + "\n") == ".env secret");
    CHECK(kinds("AWS_SESSION_TOKEN = " + body(64) + "\n") == ".env secret");
    CHECK(kinds("api_token = " + body(40) + "\n") == "");  // bare after ` = `: code, as before
}

TEST_CASE("secrets: only what the change wrote; the line and a masked prefix", "[secrets]") {
    std::string tok = "ghp_" + body(36);
    std::string old = "a\nTOKEN=" + tok + "\n";
    CHECK(find_secrets(old, old).empty());
    auto hits = find_secrets(old + "b\nnew=glpat-" + body(24) + "\n", old);
    REQUIRE(hits.size() == 1);
    CHECK(hits[0].line == 4);
    CHECK(hits[0].kind == "GitLab token");
    CHECK(hits[0].shown == "glpat-…");
    CHECK(review::secret_phrase(hits[0]) == "GitLab token on line 4 (glpat-…)");
    auto env = find_secrets("API_KEY=" + body(32, "0123456789abcdef"));
    REQUIRE(env.size() == 1);
    CHECK(env[0].shown == "API_KEY=…");
    CHECK(find_secrets(std::string("\0", 1) + "ghp_" + body(36)).empty());  // binary
}

TEST_CASE("secrets: mask_secrets keeps the prefix and drops the rest", "[secrets]") {
    std::string tok = "ghp_" + body(36), env = "API_KEY=" + body(32, "0123456789abcdef");
    std::string key = "-----BEGIN RSA PRIVATE KEY-----\n+" + body(64) + "\n+-----END RSA PRIVATE KEY-----\n";
    std::string diff = "@@ -0,0 +1,3 @@\n+x " + tok + " y\n+" + env + "\n context\n+" + key;
    std::string m = mask_secrets(diff);
    CHECK(m.find(tok.substr(4)) == std::string::npos);
    CHECK(m.find(body(32, "0123456789abcdef")) == std::string::npos);
    CHECK(m.find(body(64)) == std::string::npos);
    CHECK(m.find("+x ghp_… y\n") != std::string::npos);
    CHECK(m.find("+API_KEY=…\n") != std::string::npos);
    CHECK(m.find(" context\n") != std::string::npos);
    CHECK(m.find("-----END RSA PRIVATE KEY-----") != std::string::npos);
    CHECK(mask_secrets("plain\ntext") == "plain\ntext");
}

TEST_CASE("secrets: code that assigns to a key-ish name is no .env secret", "[secrets]") {
    // Lines pip's own vendored code has (a venv must not be flagged).
    CHECK(kinds("        password = self._get_password(netloc, username)\n") == "");
    CHECK(kinds("    key = _url_to_key(url_without_query_string_abc123)\n") == "");
    CHECK(kinds("    keywords = 'aB3dE5gH7jK9mN1pQ2sT4'\n") == "");  // not the word KEY
    CHECK(kinds("statetokens = aB3dE5gH7jK9mN1pQ2sT4\n") == "");
    CHECK(kinds("SecKeychainRef = POINTER(aB3dE5gH7jK9mN1pQ2sT4)\n") == "");
    CHECK(kinds("API_KEY=get(aB3dE5gH7jK9mN1pQ2sT4)\n") == "");  // a call, not a literal
    // TOML/INI style, quoted, and camelCase names do count.
    CHECK(kinds("api_key = \"aB3dE5gH7jK9mN1pQ2sT4\"\n") == ".env secret");
    CHECK(kinds("  \"apiKey\": x\nclientSecret='aB3dE5gH7jK9mN1pQ2sT4' # prod\n") == ".env secret");
    CHECK(kinds("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY\n") == ".env secret");
}
