#include "review/prompt/content_risk.h"

#include <nlohmann/json.hpp>
#include <set>

namespace review {

namespace {

std::string basename_of(const std::string& p) {
    auto s = p.rfind('/');
    return s == std::string::npos ? p : p.substr(s + 1);
}

// path is .vscode/NAME, or ends in /.vscode/NAME (no allocation: asked of every changed file).
bool in_vscode(std::string_view path, std::string_view name) {
    constexpr std::string_view dir = ".vscode/";
    if (path.size() < dir.size() + name.size() || !path.ends_with(name)) return false;
    std::string_view head = path.substr(0, path.size() - name.size());
    return head.ends_with(dir) && (head.size() == dir.size() || head[head.size() - dir.size() - 1] == '/');
}

// The lifecycle scripts npm runs without being asked (npm install).
const char* const kNpmScripts[] = {"preinstall", "install", "postinstall", "prepare"};

// package.json "scripts" entries npm runs by itself, new or changed.
void npm_scripts(std::string_view text, std::string_view old, std::vector<std::string>* out) {
    auto now = nlohmann::json::parse(text, nullptr, false);
    auto before = nlohmann::json::parse(old, nullptr, false);
    auto script = [](const nlohmann::json& j, const char* name) -> std::string {
        if (!j.is_object() || !j.contains("scripts") || !j["scripts"].is_object()) return "";
        const auto& s = j["scripts"];
        return s.contains(name) ? s[name].dump() : "";
    };
    for (const char* name : kNpmScripts) {
        if (now.is_discarded()) {
            // npm would refuse it, but a person should still see a script's name.
            if (text.find(std::string("\"") + name + "\"") != std::string_view::npos)
                out->push_back(std::string(name) + " script (npm runs it; package.json does not parse)");
            continue;
        }
        std::string n = script(now, name);
        if (!n.empty() && n != script(before, name)) out->push_back(std::string(name) + " script (npm runs it)");
    }
}

// Lines that hold one of `keys`, as a set: changed when the sets differ.
std::set<std::string_view> lines_with(std::string_view text, const std::vector<std::string_view>& keys) {
    std::set<std::string_view> out;
    for (size_t pos = 0; pos < text.size();) {
        size_t nl = text.find('\n', pos);
        std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        for (auto k : keys)
            if (line.find(k) != std::string_view::npos) {
                size_t a = line.find_first_not_of(" \t"), b = line.find_last_not_of(" \t\r,");
                out.insert(a == std::string_view::npos ? line : line.substr(a, b - a + 1));
                break;
            }
        if (nl == std::string_view::npos) break;
        pos = nl + 1;
    }
    return out;
}

}  // namespace

bool content_scanned(const std::string& path) {
    // No component is one of these dirs (component by component: no allocation per file).
    for (size_t from = 0;;) {
        size_t end = path.find('/', from);
        std::string_view part = std::string_view(path).substr(from, end == std::string::npos ? end : end - from);
        if (part == "site-packages" || part == "dist-packages" || part == "node_modules") return false;
        if (end == std::string::npos) return true;
        from = end + 1;
    }
}

ContentRisks content_risks(const std::string& path, std::string_view new_text, std::string_view old_text) {
    ContentRisks r;
    if (!scannable_text(new_text)) return r;
    const std::string name = basename_of(path);
    if (name == "package.json") npm_scripts(new_text, old_text, &r.phrases);
    if (in_vscode(path, "tasks.json") && new_text.find("folderOpen") != std::string_view::npos &&
        lines_with(new_text, {"folderOpen"}) != lines_with(old_text, {"folderOpen"}))
        r.phrases.push_back("VS Code task runs on folder open");
    if (in_vscode(path, "settings.json")) {
        std::vector<std::string_view> keys = {"terminal.integrated.", "nterpreterPath\"", "python.pythonPath",
                                              "\"python.venvPath", "\"python.condaPath"};
        auto now = lines_with(new_text, keys);
        if (!now.empty() && now != lines_with(old_text, keys))
            r.phrases.push_back("VS Code terminal or interpreter setting");
    }
    r.secrets = find_secrets_scannable(new_text, old_text);  // scannable: checked above
    constexpr size_t kNamed = 3;                             // the rest are counted
    for (size_t i = 0; i < r.secrets.size() && i < kNamed; i++)
        r.phrases.push_back("secret: " + secret_phrase(r.secrets[i]));
    if (r.secrets.size() > kNamed)
        r.phrases.push_back("secret: " + std::to_string(r.secrets.size() - kNamed) + " more");
    return r;
}

}  // namespace review
