#include "helper/sandbox/policy/profile.h"

#include <fnmatch.h>

#include <algorithm>

namespace profile {

const std::vector<std::string>& secret_paths() {
    static const std::vector<std::string> v = {
        // keys and cloud credentials
        ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json", ".netrc",
        // package registries, git and password stores
        ".npmrc", ".pypirc", ".git-credentials", ".config/gh", ".password-store", ".local/share/keyrings",
        // browser profiles (cookies, saved passwords), NSS's key store, mail;
        // the snaps are Ubuntu's default Firefox and its Chromium (attack17)
        ".mozilla", ".config/google-chrome", ".config/chromium", "snap/firefox/common/.mozilla",
        "snap/chromium/common/chromium", ".config/BraveSoftware", ".config/microsoft-edge", ".config/vivaldi",
        ".pki/nssdb", ".thunderbird",
        // credentials files of database clients, Vault, cargo, RubyGems,
        // Terraform, rclone, Kaggle, SOPS's age keys, the 1Password CLI,
        // Emacs's authinfo (attack17)
        ".pgpass", ".my.cnf", ".vault-token", ".cargo/credentials.toml", ".cargo/credentials", ".gem/credentials",
        ".terraform.d/credentials.tfrc.json", ".config/rclone", ".kaggle", ".config/sops/age", ".config/op",
        ".authinfo", ".authinfo.gpg",
        // layover's own configuration
        ".config/layover",
        // sockets of daemons that act for the user: a unix socket on a
        // read-only view of the real tree (--home ro, or a home that cannot
        // get a scratch layer) still connects. Docker Desktop, colima,
        // Rancher Desktop, lima VMs; the 1Password and Bitwarden ssh agents
        ".docker/run", ".docker/desktop", ".colima", ".rd", ".lima", ".1password", ".bitwarden-ssh-agent.sock"};
    return v;
}

const std::vector<std::string>& daemon_sockets() {
    // Root-equivalent daemons whose socket lies outside /run (empty inside):
    // LXD (snap and not) and Incus let their group's members start a
    // privileged container. And two that any local user reaches there
    // (attack17): Postfix's public sockets (its cleanup service takes mail
    // for the network from anyone: past --network none), and SSSD's PAM
    // responder (password checks against the directory: guessing).
    static const std::vector<std::string> v = {"/var/snap/lxd/common/lxd/unix.socket", "/var/lib/lxd/unix.socket",
                                               "/var/lib/incus/unix.socket", "/var/spool/postfix/public",
                                               "/var/lib/sss/pipes/pam"};
    return v;
}

const std::vector<std::string>& secret_env_patterns() {
    // Matched without regard to case (`github_token` too). The second group
    // (attack17) holds names in common use the first missed: Django's and
    // Rails' SECRET_KEY, MYSQL_PWD, DB_PASS, passphrases, private keys,
    // connection URLs and DSNs that carry a password or key, and the
    // Bitwarden and 1Password CLIs' unlock sessions.
    static const std::vector<std::string> v = {
        "*_TOKEN", "*SECRET*", "*_API_KEY", "*PASSWORD*", "*_CREDENTIALS", "AWS_*", "AZURE_*",
        "GOOGLE_APPLICATION_CREDENTIALS", "*_PASS", "*_PASSWD", "*_PWD", "*PASSPHRASE*", "*_PRIVATE_KEY",
        "*_ACCESS_KEY", "*_APIKEY", "*_DSN", "DATABASE_URL", "*_DATABASE_URL", "BW_SESSION", "OP_SESSION_*",
        // host daemons and displays
        "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY"};
    return v;
}

const std::vector<std::string>& minimal_env() {
    static const std::vector<std::string> v = {"PATH", "HOME", "TERM", "LANG", "LC_*", "USER", "SHELL", "TZ"};
    return v;
}

namespace {

bool any_match(const std::vector<std::string>& globs, const std::string& name, int flags = 0) {
    for (const auto& g : globs)
        if (::fnmatch(g.c_str(), name.c_str(), flags) == 0) return true;
    return false;
}

std::string name_of(const std::string& entry) { return entry.substr(0, entry.find('=')); }

}  // namespace

bool valid_env_name(std::string_view name) {
    if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
    for (char c : name)
        if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
    return true;
}

EnvOutcome filter_env(const std::vector<std::string>& host, const EnvPolicy& policy) {
    EnvOutcome out;
    std::vector<std::string> set_names;
    for (const auto& s : policy.set) set_names.push_back(name_of(s));
    for (const auto& entry : host) {
        std::string name = name_of(entry);
        if (name.empty() || entry.find('=') == std::string::npos) continue;
        if (name.rfind("LAYOVER_", 0) == 0) continue;
        if (std::find(set_names.begin(), set_names.end(), name) != set_names.end()) continue;
        bool kept = any_match(policy.keep, name);
        if (policy.clear && !kept && !any_match(minimal_env(), name)) continue;
        if (!kept && any_match(secret_env_patterns(), name, FNM_CASEFOLD)) {
            if (!policy.clear) out.dropped.push_back(name);
            continue;
        }
        out.env.push_back(entry);
    }
    for (const auto& s : policy.set) out.env.push_back(s);
    std::sort(out.dropped.begin(), out.dropped.end());
    out.dropped.erase(std::unique(out.dropped.begin(), out.dropped.end()), out.dropped.end());
    return out;
}

std::string list_names(const std::vector<std::string>& names, size_t max) {
    std::string s;
    for (size_t i = 0; i < names.size() && i < max; i++) s += (i ? ", " : "") + names[i];
    if (names.size() > max) s += ", …";
    return s;
}

}  // namespace profile
