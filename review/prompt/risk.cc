#include "review/prompt/risk.h"

#include <sys/stat.h>

#include <cstdio>

#include "capture/patch/reader.h"
#include "review/txn/txn.h"

namespace review {

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

std::string basename_of(const std::string& p) {
    auto s = p.rfind('/');
    return s == std::string::npos ? p : p.substr(s + 1);
}

// Does `rel` (relative to home) equal `pattern` or lie beneath it when the
// pattern ends in '/'?
bool matches(const std::string& rel, const std::string& pattern) {
    if (!pattern.empty() && pattern.back() == '/') return starts_with(rel, pattern) || rel + "/" == pattern;
    return rel == pattern;
}

struct Rule {
    const char* path;  // relative to home; a trailing '/' covers the subtree
    const char* why;
};

// Files a login, a shell, a desktop session, ssh, git or systemd run or
// trust, relative to the home directory.
const Rule kHomeRules[] = {
    {".bashrc", "shell startup file"},
    {".bash_profile", "shell startup file"},
    {".bash_login", "shell startup file"},
    {".bash_logout", "shell startup file"},
    {".profile", "shell startup file"},
    {".zshrc", "shell startup file"},
    {".zshenv", "shell startup file"},
    {".zprofile", "shell startup file"},
    {".zlogin", "shell startup file"},
    {".zlogout", "shell startup file"},
    {".kshrc", "shell startup file"},
    {".mkshrc", "shell startup file"},
    {".cshrc", "shell startup file"},
    {".tcshrc", "shell startup file"},
    {".login", "shell startup file"},
    {".inputrc", "shell startup file"},
    {".bash_aliases", "shell startup file"},  // Debian's and Ubuntu's ~/.bashrc source it
    {".bashrc.d/", "shell startup file"},     // Fedora's ~/.bashrc sources every file there
    {".config/fish/", "shell startup file"},
    {".config/zsh/", "shell startup file"},
    {".xprofile", "session startup file"},
    {".xinitrc", "session startup file"},
    {".xsession", "session startup file"},
    {".xsessionrc", "session startup file"},
    {".pam_environment", "login environment"},
    {".config/environment.d/", "login environment"},
    {".ssh/", "ssh keys or config"},
    {".gnupg/", "gpg keys or config"},
    {".gitconfig", "git config"},
    {".config/git/", "git config"},
    {".config/autostart/", "desktop autostart"},
    {".config/systemd/user/", "systemd user unit"},
    {".local/share/systemd/user/", "systemd user unit"},
    {".local/bin/", "in ~/.local/bin (on PATH)"},
    {"bin/", "in ~/bin (on PATH)"},
    {".config/layover/", "layover's own config"},
    {".cargo/config.toml", "cargo config (runs build tools)"},
    {".cargo/config", "cargo config (runs build tools)"},
    // Read at every start of a tool the person runs, and able to run commands.
    {".vimrc", "editor start-up file (runs commands)"},
    {".vim/plugin/", "editor start-up file (runs commands)"},
    {".config/nvim/", "editor start-up file (runs commands)"},
    {".emacs", "editor start-up file (runs commands)"},
    {".emacs.d/init.el", "editor start-up file (runs commands)"},
    {".tmux.conf", "tmux start-up file (runs commands)"},
    {".config/tmux/", "tmux start-up file (runs commands)"},
    {".gdbinit", "gdb start-up file (runs commands)"},
};

bool ends_with(const std::string& s, const std::string& t) {
    return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

std::string parent_of(const std::string& p) {
    auto s = p.rfind('/');
    return s == std::string::npos ? std::string() : p.substr(0, s);
}

bool is_makefile(const std::string& name) {
    return name == "Makefile" || name == "makefile" || name == "GNUmakefile" ||
           (name.size() > 3 && ends_with(name, ".mk"));
}

// Places anywhere in the tree where a later, ordinary command runs what
// the file says: Python at start-up, package managers, make.
void exec_later_rules(const capture::Change& c, const std::string& name, const RiskContext& ctx,
                      const std::function<void(const std::string&)>& add) {
    const std::string dir = basename_of(parent_of(c.path));
    bool site = dir == "site-packages" || dir == "dist-packages";
    if (site && ends_with(name, ".pth") && name.size() > 4) add("Python .pth file (runs at every python start)");
    if (site && (name == "sitecustomize.py" || name == "usercustomize.py")) add("Python start-up hook (" + name + ")");
    if (name == ".npmrc" || name == "pip.conf" || name == "pip.ini" || name == ".pypirc")
        add("package index config (" + name + ": index URL or token)");
    if (c.kind == capture::Kind::Added && c.type == capture::Type::File && is_makefile(name) &&
        !(ctx.dir_has_makefile && ctx.dir_has_makefile(parent_of(c.path))))
        add("new makefile where there was none");
}

// A symlink target that leaves the target tree, lexically: absolute, or
// more ".." than the link's own depth.
bool leaves_target(const std::string& link_path, const std::string& target) {
    if (target.empty()) return false;
    if (target[0] == '/') return true;
    long depth = 0;
    for (char ch : link_path)
        if (ch == '/') depth++;
    size_t start = 0;
    while (start <= target.size()) {
        size_t slash = target.find('/', start);
        std::string comp = target.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        if (comp == "..") {
            if (--depth < 0) return true;
        } else if (!comp.empty() && comp != ".") {
            depth++;
        }
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    return false;
}

std::string octal(uint32_t m) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%03o", m & 07777);
    return buf;
}

}  // namespace

std::optional<std::string> home_relative(const std::string& target, const std::string& home) {
    if (home.empty() || target.empty()) return std::nullopt;
    std::string t = target, h = home;
    while (t.size() > 1 && t.back() == '/') t.pop_back();
    while (h.size() > 1 && h.back() == '/') h.pop_back();
    if (h == t) return std::string();
    if (t == "/") return h.substr(1);
    if (starts_with(h, t + "/")) return h.substr(t.size() + 1);
    return std::nullopt;
}

// A repository deleted whole: its history (unpushed commits, stashes) goes
// with it, and one `D  proj/` line does not say so.
template <class Add>
void deleted_repo_rules(const capture::Change& c, const std::string& name, const RiskContext& ctx, Add& add) {
    if (name == ".git") add("deletes a git repository's history (.git)");
    else if (ctx.dir_is_git_repo && ctx.dir_is_git_repo(c.path)) add("deletes a git repository");
}

std::vector<std::string> home_rule_paths() {
    std::vector<std::string> out;
    for (const auto& r : kHomeRules) out.push_back(r.path);
    out.push_back(".local/share/applications/");
    return out;
}

std::vector<std::string> risks_of(const capture::Change& c, const RiskContext& ctx) {
    using capture::Kind;
    using capture::Type;
    std::vector<std::string> out;
    auto add = [&](const std::string& why) {
        for (const auto& w : out)
            if (w == why) return;
        out.push_back(why);
    };

    auto home_rules = [&](const std::string& rel) {
        for (const auto& r : kHomeRules)
            if (matches(rel, r.path)) add(r.why);
        if (starts_with(rel, ".local/share/applications/") && ends_with(rel, ".desktop"))
            add("desktop entry (runs from the menu or a file type)");
    };
    if (ctx.home_rel) {
        const std::string& h = *ctx.home_rel;
        if (h.empty() || starts_with(c.path, h + "/")) home_rules(h.empty() ? c.path : c.path.substr(h.size() + 1));
    }
    // A dotfile kept elsewhere in the tree: ~/.bashrc -> dotfiles/bash/.bashrc.
    for (const auto& [real, home_path] : ctx.home_links)
        if (c.path == real || starts_with(c.path, real + "/")) home_rules(home_path + c.path.substr(real.size()));
    // Anywhere in the tree: what git, direnv and layover itself act on.
    const std::string name = basename_of(c.path);
    std::string slashed = "/" + c.path;
    if (slashed.find("/.git/hooks/") != std::string::npos || c.path == ".git/hooks" ||
        (slashed.size() >= 11 && slashed.compare(slashed.size() - 11, 11, "/.git/hooks") == 0))
        add("git hook");
    if (slashed.size() >= 12 && slashed.compare(slashed.size() - 12, 12, "/.git/config") == 0) add("git config");
    // Hooks git runs through a hook manager, from the work tree itself.
    if (slashed.find("/.husky/") != std::string::npos) add("git hook (husky)");
    if (name == ".pre-commit-config.yaml") add("git hook config (pre-commit runs it)");
    if (name == "lefthook.yml" || name == ".lefthook.yml" || name == "lefthook-local.yml" ||
        name == ".lefthook-local.yml")
        add("git hook config (lefthook runs it)");
    if (name == ".envrc") add("direnv script (.envrc)");
    if (name == ".layoverignore") add("layover's own config");
    if (is_reserved_path(c.path)) add("layover's reserved name (apply refuses it)");
    if (name.rfind(".wh.", 0) == 0) add(".wh. name (cannot be saved: --ignore it)");
    if (capture::too_long_for_a_patch(c.path.size())) add("path too long for a patch (cannot be saved: --ignore it)");
    if (c.kind != Kind::Deleted) exec_later_rules(c, name, ctx, add);
    if (ctx.config_rel &&
        (ctx.config_rel->empty() || c.path == *ctx.config_rel || starts_with(c.path, *ctx.config_rel + "/")))
        add("layover's own config");

    if (c.kind == Kind::Deleted && c.old_type == Type::Dir) deleted_repo_rules(c, name, ctx, add);
    if (c.kind == Kind::Deleted) return out;  // what follows is about the new entry
    if (auto it = ctx.content.find(c.path); it != ctx.content.end())
        for (const auto& w : it->second) add(w);
    bool file = c.type == Type::File;
    if (file && (c.mode & 0111) && c.kind != Kind::Metadata) add("executable");
    if ((c.mode & (S_ISUID | S_ISGID)) != 0) add("setuid/setgid bit (never applied)");
    bool same_kind = c.old_type == c.type && c.old_type != Type::None;
    if (same_kind && c.type != Type::Symlink && (c.mode & ~c.old_mode & 07777) != 0)
        add("mode widened " + octal(c.old_mode) + " -> " + octal(c.mode));
    if (!same_kind && c.type != Type::Symlink && (c.mode & 0022)) add("group/world-writable");
    if (c.type == Type::Symlink && leaves_target(c.path, c.link_target)) add("symlink leads outside the target");
    return out;
}

std::string marks_text(const std::vector<std::string>& reasons) {
    std::string out;
    for (const auto& w : reasons) out += (out.empty() ? "  ! " : ", ") + w;
    return out;
}

}  // namespace review
