#include <catch2/catch.hpp>

#include "review/prompt/risk.h"

using capture::Change;
using capture::Kind;
using capture::Type;
using review::RiskContext;
using review::risks_of;

namespace {

Change file(const std::string& path, uint32_t mode = 0644, Kind k = Kind::Added) {
    Change c;
    c.path = path;
    c.kind = k;
    c.type = Type::File;
    c.mode = mode;
    if (k != Kind::Added) {
        c.old_type = Type::File;
        c.old_mode = 0644;
    }
    return c;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
    for (const auto& x : v)
        if (x.find(s) != std::string::npos) return true;
    return false;
}

RiskContext home_is_target() { return RiskContext{std::string()}; }

}  // namespace

TEST_CASE("review risk: home_relative locates $HOME inside the target") {
    CHECK(review::home_relative("/home/u", "/home/u") == std::string());
    CHECK(review::home_relative("/home", "/home/u") == std::string("u"));
    CHECK(review::home_relative("/", "/home/u") == std::string("home/u"));
    CHECK_FALSE(review::home_relative("/home/u/project", "/home/u").has_value());
    CHECK_FALSE(review::home_relative("/home/uv", "/home/u").has_value());
    CHECK_FALSE(review::home_relative("/home/u", "").has_value());
}

TEST_CASE("review risk: shell startup files, ssh, gitconfig, autostart, systemd, ~/.local/bin") {
    auto ctx = home_is_target();
    CHECK(has(risks_of(file(".bashrc", 0644, Kind::Modified), ctx), "shell startup"));
    CHECK(has(risks_of(file(".profile"), ctx), "shell startup"));
    CHECK(has(risks_of(file(".zshrc"), ctx), "shell startup"));
    CHECK(has(risks_of(file(".config/fish/config.fish"), ctx), "shell startup"));
    CHECK(has(risks_of(file(".bash_aliases"), ctx), "shell startup"));
    CHECK(has(risks_of(file(".bashrc.d/evil.sh"), ctx), "shell startup"));
    for (const char* f : {".vimrc", ".vim/plugin/x.vim", ".config/nvim/init.lua", ".emacs", ".emacs.d/init.el"})
        CHECK(has(risks_of(file(f), ctx), "editor start-up"));
    CHECK(has(risks_of(file(".tmux.conf"), ctx), "tmux start-up"));
    CHECK(has(risks_of(file(".gdbinit"), ctx), "gdb start-up"));
    CHECK(risks_of(file(".vim/swap/x.swp"), ctx).empty());
    CHECK(has(risks_of(file(".ssh/authorized_keys"), ctx), "ssh"));
    CHECK(has(risks_of(file(".ssh/config"), ctx), "ssh"));
    CHECK(has(risks_of(file(".gitconfig"), ctx), "git config"));
    CHECK(has(risks_of(file(".config/autostart/x.desktop"), ctx), "autostart"));
    CHECK(has(risks_of(file(".config/systemd/user/evil.service"), ctx), "systemd"));
    CHECK(has(risks_of(file(".local/share/systemd/user/evil.timer"), ctx), "systemd"));
    CHECK(has(risks_of(file(".local/bin/ls"), ctx), ".local/bin"));
    CHECK(has(risks_of(file(".config/layover/config"), ctx), "layover"));
    CHECK(risks_of(file("notes.txt"), ctx).empty());
    CHECK(risks_of(file("docs/.bashrc"), ctx).empty());  // not sourced by anything
    CHECK(risks_of(file(".sshx/key"), ctx).empty());
}

TEST_CASE("review risk: layover's config file under $XDG_CONFIG_HOME is flagged too") {
    RiskContext ctx;
    ctx.config_rel = review::home_relative("/home/u", "/home/u/dots/config/layover");
    REQUIRE(ctx.config_rel == std::string("dots/config/layover"));
    CHECK(has(risks_of(file("dots/config/layover/config.toml"), ctx), "layover's own config"));
    CHECK(risks_of(file("dots/config/other.toml"), ctx).empty());
    CHECK(risks_of(file("dots/config/layoverx"), ctx).empty());
    CHECK(has(risks_of(file(".config/layover/config.toml"), home_is_target()), "layover's own config"));
}

TEST_CASE("review risk: layover's reserved names, which apply refuses, are marked anywhere in the tree") {
    RiskContext none{};
    for (const char* p : {".layover-tmp.1.2", "d/.layover-tmp.9.9", ".layover-undo", ".layover-undo/abc/undo.json",
                          "a/.layover-tmp.x/b", "d/.layover-undo", "proj/.layover-undo/ffffffffffff/undo.json"})
        CHECK(has(risks_of(file(p), none), "layover's reserved name (apply refuses it)"));
    // (.layover-undo below the top is the undo store of an apply to that dir: attack14.)
    for (const char* p : {"d/.layover-undox", ".layover-undox", "layover-tmp.1", ".layover-tmpx"})
        CHECK(risks_of(file(p), none).empty());
    // The patch format's whiteout prefix: save refuses it, so status says so before.
    CHECK(has(risks_of(file("d/.wh.foo"), none), ".wh. name (cannot be saved: --ignore it)"));
    CHECK(risks_of(file("d/x.wh.foo"), none).empty());
    // A path a patch cannot hold (save refuses it, naming --ignore): marked too.
    std::string deep;
    while (deep.size() + 13 <= 65536) deep += "abcdefghi/";
    CHECK(has(risks_of(file(deep + "f"), none), "path too long for a patch (cannot be saved: --ignore it)"));
    std::string fits(65536 - 13, 'a');
    CHECK(risks_of(file(fits), none).empty());
}

TEST_CASE("review risk: a home rule's path symlinked elsewhere in the tree marks where it leads") {
    // ~/.bashrc -> dotfiles/bash/.bashrc and ~/.config -> dotfiles/config (GNU stow and the like).
    auto ctx = home_is_target();
    ctx.home_links = {{"dotfiles/bash/.bashrc", ".bashrc"}, {"dotfiles/config", ".config"}};
    CHECK(has(risks_of(file("dotfiles/bash/.bashrc", 0644, Kind::Modified), ctx), "shell startup"));
    CHECK(has(risks_of(file("dotfiles/config/autostart/x.desktop"), ctx), "autostart"));
    CHECK(has(risks_of(file("dotfiles/config/systemd/user/evil.service"), ctx), "systemd"));
    CHECK(risks_of(file("dotfiles/bash/.bashrc.bak"), ctx).empty());
    CHECK(risks_of(file("dotfiles/configs/x"), ctx).empty());
    CHECK(risks_of(file("dotfiles/config/notes.txt"), ctx).empty());
    // The home beneath the target: the link's path is the home-relative one.
    RiskContext parent{std::string("u")};
    parent.home_links = {{"shared/rc", ".zshrc"}};
    CHECK(has(risks_of(file("shared/rc", 0644, Kind::Modified), parent), "shell startup"));
}

TEST_CASE("review risk: home rules follow $HOME's place in the target, and only there") {
    RiskContext parent{std::string("u")};
    CHECK(has(risks_of(file("u/.bashrc"), parent), "shell startup"));
    CHECK(risks_of(file(".bashrc"), parent).empty());
    RiskContext none{};
    CHECK(risks_of(file(".bashrc"), none).empty());
    CHECK(risks_of(file(".ssh/config"), none).empty());
}

TEST_CASE("review risk: git hooks, .git/config, .envrc and .layoverignore anywhere") {
    RiskContext none{};
    CHECK(has(risks_of(file("proj/.git/hooks/pre-commit"), none), "git hook"));
    CHECK(has(risks_of(file(".git/hooks/post-checkout"), none), "git hook"));
    CHECK(has(risks_of(file("proj/.git/config"), none), "git config"));
    CHECK(has(risks_of(file("proj/.envrc"), none), "direnv"));
    CHECK(has(risks_of(file("proj/.layoverignore"), none), "layover"));
    CHECK(risks_of(file("proj/git/config"), none).empty());
    CHECK(risks_of(file("proj/.gitconfig.bak"), none).empty());
}

TEST_CASE("review risk: hook managers' hooks and configs anywhere (husky, pre-commit, lefthook)") {
    RiskContext none{};
    CHECK(has(risks_of(file("web/.husky/pre-commit"), none), "git hook (husky)"));
    CHECK(has(risks_of(file(".husky/_/h"), none), "git hook (husky)"));
    CHECK(has(risks_of(file(".pre-commit-config.yaml", 0644, Kind::Modified), none), "pre-commit runs it"));
    CHECK(has(risks_of(file("sub/lefthook.yml"), none), "lefthook runs it"));
    CHECK(has(risks_of(file(".lefthook-local.yml"), none), "lefthook runs it"));
    CHECK(risks_of(file("docs/husky.md"), none).empty());
    CHECK(risks_of(file("x.husky/a"), none).empty());
}

TEST_CASE("review risk: executables and widened modes") {
    RiskContext none{};
    CHECK(has(risks_of(file("tool.sh", 0755), none), "executable"));
    CHECK(has(risks_of(file("tool.sh", 0755, Kind::Modified), none), "executable"));
    Change widened = file("data", 0666, Kind::Metadata);
    auto w = risks_of(widened, none);
    CHECK(has(w, "mode widened 644 -> 666"));
    CHECK_FALSE(has(w, "executable"));
    Change narrowed = file("data", 0600, Kind::Metadata);
    CHECK(risks_of(narrowed, none).empty());
    CHECK(has(risks_of(file("shared", 0666), none), "world-writable"));
    Change dir;
    dir.path = "d";
    dir.kind = Kind::Metadata;
    dir.type = dir.old_type = Type::Dir;
    dir.old_mode = 0755;
    dir.mode = 0777;
    CHECK(has(risks_of(dir, none), "mode widened 755 -> 777"));
    Change gone = file("run.sh", 0755, Kind::Deleted);
    gone.type = Type::None;
    gone.mode = 0;
    CHECK(risks_of(gone, none).empty());
}

TEST_CASE("review risk: symlinks leading outside the target") {
    RiskContext none{};
    Change l;
    l.kind = Kind::Added;
    l.type = Type::Symlink;
    l.path = "a/link";
    l.link_target = "/etc/passwd";
    CHECK(has(risks_of(l, none), "outside"));
    l.link_target = "../../x";
    CHECK(has(risks_of(l, none), "outside"));
    l.link_target = "../x";
    CHECK(risks_of(l, none).empty());
    l.link_target = "b/../../c";
    CHECK(risks_of(l, none).empty());
    l.link_target = "./../.././x";
    CHECK(has(risks_of(l, none), "outside"));
    l.link_target = "sibling";
    CHECK(risks_of(l, none).empty());
}

TEST_CASE("review risk: Python .pth files and site hooks under any site-packages") {
    RiskContext none{};
    CHECK(has(risks_of(file("proj/.venv/lib/python3.11/site-packages/evil.pth"), none), ".pth"));
    CHECK(has(risks_of(file("usr/lib/python3/dist-packages/x.pth", 0644, Kind::Modified), none), ".pth"));
    CHECK(has(risks_of(file(".local/lib/python3.12/site-packages/sitecustomize.py"), none), "sitecustomize.py"));
    CHECK(has(risks_of(file("v/lib/site-packages/usercustomize.py"), none), "usercustomize.py"));
    CHECK(risks_of(file("proj/notes.pth"), none).empty());                            // not in site-packages
    CHECK(risks_of(file("v/lib/site-packages/pkg/sitecustomize.py"), none).empty());  // not at its top
    CHECK(risks_of(file("v/lib/site-packages/pkg/mod.py"), none).empty());
}

TEST_CASE("review risk: package index configs (.npmrc, pip.conf, .pypirc)") {
    RiskContext none{};
    CHECK(has(risks_of(file(".npmrc"), none), "package index config (.npmrc"));
    CHECK(has(risks_of(file(".config/pip/pip.conf", 0644, Kind::Modified), none), "pip.conf"));
    CHECK(has(risks_of(file("proj/.pypirc"), none), ".pypirc"));
    CHECK(risks_of(file("proj/npmrc.txt"), none).empty());
    CHECK(risks_of(file("proj/pip.conf.example"), none).empty());
}

TEST_CASE("review risk: ~/.cargo/config.toml and desktop entries, at home only") {
    auto ctx = home_is_target();
    CHECK(has(risks_of(file(".cargo/config.toml"), ctx), "cargo config"));
    CHECK(has(risks_of(file(".local/share/applications/firefox.desktop"), ctx), "desktop entry"));
    CHECK(risks_of(file(".cargo/registry/cache/x.crate"), ctx).empty());
    CHECK(risks_of(file(".local/share/applications/mimeinfo.cache"), ctx).empty());
    CHECK(risks_of(file("proj/app.desktop"), ctx).empty());
    RiskContext none{};
    CHECK(risks_of(file(".cargo/config.toml"), none).empty());
}

TEST_CASE("review risk: a new makefile only where the directory had none") {
    RiskContext ctx{};
    ctx.dir_has_makefile = [](const std::string& dir) { return dir == "old"; };
    CHECK(has(risks_of(file("new/Makefile"), ctx), "new makefile"));
    CHECK(has(risks_of(file("rules.mk"), ctx), "new makefile"));
    CHECK(risks_of(file("old/Makefile"), ctx).empty());  // the directory had one
    CHECK(risks_of(file("old/extra.mk"), ctx).empty());
    CHECK(risks_of(file("new/Makefile", 0644, Kind::Modified), ctx).empty());  // it was there
    CHECK(risks_of(file("new/Makefile.am"), ctx).empty());
}

TEST_CASE("review risk: what the contents say is added to the path's marks") {
    RiskContext ctx{};
    ctx.content["proj/.env"] = {"secret: GitHub token on line 2 (ghp_…)"};
    auto r = risks_of(file("proj/.env"), ctx);
    REQUIRE(r.size() == 1);
    CHECK(r[0] == "secret: GitHub token on line 2 (ghp_…)");
    CHECK(risks_of(file("proj/other"), ctx).empty());
}

TEST_CASE("review risk: a git repository deleted whole, and only that") {
    RiskContext ctx{};
    ctx.dir_is_git_repo = [](const std::string& dir) { return dir == "app" || dir == "code/lib"; };
    auto gone = [](const std::string& path, Type old) {
        Change c;
        c.path = path;
        c.kind = Kind::Deleted;
        c.old_type = old;
        return c;
    };
    CHECK(risks_of(gone("proj/.git", Type::Dir), ctx) ==
          std::vector<std::string>{"deletes a git repository's history (.git)"});
    CHECK(risks_of(gone("app", Type::Dir), ctx) == std::vector<std::string>{"deletes a git repository"});
    CHECK(risks_of(gone("code/lib", Type::Dir), ctx) == std::vector<std::string>{"deletes a git repository"});
    CHECK(risks_of(gone("plain", Type::Dir), ctx).empty());
    CHECK(risks_of(gone("app", Type::File), ctx).empty());            // a file of that name holds no repository
    CHECK(risks_of(gone("sub/.git", Type::File), ctx).empty());       // a worktree's pointer: the repository lives on
    CHECK(risks_of(gone("code", Type::Dir), RiskContext{}).empty());  // no probe: as if not
    auto added = file("app/.git/x");
    CHECK_FALSE(has(risks_of(added, ctx), "deletes"));
}
