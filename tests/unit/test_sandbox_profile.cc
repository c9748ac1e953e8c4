// The isolation profile's pure parts: the environment filter, the secret
// list, bind-mount aliases, the hide plan and the run options that set them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <optional>

#include "helper/base/fd.h"
#include "helper/sandbox/policy/hide.h"
#include "helper/sandbox/policy/profile.h"
#include "helper/sandbox/policy/run_args.h"
#include "helper/sandbox/policy/scratch.h"
#include "helper/store/records/undo_trees.h"
#include "overlay/mask.h"
#include "overlay/mountinfo.h"
#include "tests/unit/capture_tree.h"

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

// Removes the case's TempDir now and says whether it is gone: the cleanup
// each case CHECKed when it ran rm -rf itself.
bool removed(std::optional<testtree::TempDir>& t) {
    std::string path = t->path;
    t.reset();
    return ::access(path.c_str(), F_OK) != 0;
}

}  // namespace

TEST_CASE("profile: secret variables are dropped by name, values never looked at") {
    std::vector<std::string> host = {"PATH=/usr/bin",
                                     "GITHUB_TOKEN=t",
                                     "AWS_REGION=eu",
                                     "MY_SECRET_X=1",
                                     "OPENAI_API_KEY=k",
                                     "DB_PASSWORD=p",
                                     "X_CREDENTIALS=c",
                                     "DISPLAY=:0",
                                     "SSH_AUTH_SOCK=/s",
                                     "HOME=/h",
                                     "EDITOR=vi",
                                     "TOKEN_COUNT=3",
                                     "LAYOVER_STATE_DIR=/st",
                                     "LAYOVER_SESSION=x",
                                     "GOOGLE_APPLICATION_CREDENTIALS=f"};
    auto out = profile::filter_env(host, {});
    CHECK(out.env == std::vector<std::string>{"PATH=/usr/bin", "HOME=/h", "EDITOR=vi", "TOKEN_COUNT=3"});
    CHECK(out.dropped == std::vector<std::string>{"AWS_REGION", "DB_PASSWORD", "DISPLAY", "GITHUB_TOKEN",
                                                  "GOOGLE_APPLICATION_CREDENTIALS", "MY_SECRET_X", "OPENAI_API_KEY",
                                                  "SSH_AUTH_SOCK", "X_CREDENTIALS"});
}

TEST_CASE("profile: secret variables in common use, any case, and their look-alikes (attack17)") {
    std::vector<std::string> host = {"SECRET_KEY=1",      "SECRET_KEY_BASE=2",  "MYSQL_PWD=3",
                                     "DB_PASS=4",         "SMTP_PASSWD=5",      "GPG_PASSPHRASE=6",
                                     "CI_PRIVATE_KEY=7",  "S3_ACCESS_KEY=8",    "SG_APIKEY=9",
                                     "DATABASE_URL=10",   "RO_DATABASE_URL=11", "SENTRY_DSN=12",
                                     "BW_SESSION=13",     "OP_SESSION_me=14",   "github_token=15",
                                     "Db_Password=16",    "OLDPWD=/",           "PWD=/",
                                     "DESKTOP_SESSION=x", "BYPASS_CACHE=1",     "TOKENIZERS_PARALLELISM=false",
                                     "KEYBOARD=us",       "PASSAGE_DIR=/p"};
    auto out = profile::filter_env(host, {});
    CHECK(out.env == std::vector<std::string>{"OLDPWD=/", "PWD=/", "DESKTOP_SESSION=x", "BYPASS_CACHE=1",
                                              "TOKENIZERS_PARALLELISM=false", "KEYBOARD=us", "PASSAGE_DIR=/p"});
    CHECK(out.dropped.size() == 16);
    auto kept = profile::filter_env(host, {false, {"github_token"}, {}});
    CHECK(has(kept.env, "github_token=15"));
}

TEST_CASE("profile: --env-keep, --env and --env-clear") {
    std::vector<std::string> host = {"PATH=/p",  "GITHUB_TOKEN=t", "AWS_A=1", "AWS_B=2",
                                     "LC_ALL=C", "FOO=bar",        "TZ=UTC"};
    auto kept = profile::filter_env(host, {false, {"GITHUB_TOKEN", "AWS_*"}, {}});
    CHECK(has(kept.env, "GITHUB_TOKEN=t"));
    CHECK(has(kept.env, "AWS_B=2"));
    CHECK(kept.dropped.empty());
    auto set = profile::filter_env(host, {false, {}, {"FOO=new", "GITHUB_TOKEN=mine"}});
    CHECK(has(set.env, "FOO=new"));
    CHECK_FALSE(has(set.env, "FOO=bar"));
    CHECK(has(set.env, "GITHUB_TOKEN=mine"));  // set explicitly: passes, and is not reported as dropped
    CHECK_FALSE(has(set.dropped, "GITHUB_TOKEN"));
    auto clear = profile::filter_env(host, {true, {"FOO"}, {"X=1"}});
    CHECK(clear.env == std::vector<std::string>{"PATH=/p", "LC_ALL=C", "FOO=bar", "TZ=UTC", "X=1"});
    CHECK(clear.dropped.empty());  // asked for: nothing to report
    CHECK(profile::valid_env_name("_A1"));
    CHECK_FALSE(profile::valid_env_name("1A"));
    CHECK_FALSE(profile::valid_env_name("A-B"));
    CHECK_FALSE(profile::valid_env_name(""));
    CHECK(profile::list_names({"a", "b", "c"}, 2) == "a, b, …");
}

TEST_CASE("profile: the account's home from passwd(5) text (attack17)") {
    std::string pw =
        "root:x:0:0:root:/root:/bin/bash\nme:x:1000:1000:Me,,,:/home/me:/bin/zsh\n"
        "odd:x:1001:1001::relative:/bin/sh\nshort:x:1002\n+::::::\nlast:x:1003:1003::/home/last:";
    CHECK(profile::passwd_home(pw, 0) == "/root");
    CHECK(profile::passwd_home(pw, 1000) == "/home/me");
    CHECK(profile::passwd_home(pw, 100) == "");             // no such uid (not a prefix of 1000)
    CHECK(profile::passwd_home(pw, 1001) == "");            // not absolute
    CHECK(profile::passwd_home(pw, 1002) == "");            // too few fields
    CHECK(profile::passwd_home(pw, 1003) == "/home/last");  // no newline at the end
    CHECK(profile::passwd_home("", 0) == "");
    // Odd lines (attack22): duplicate uids (the first wins, as NSS's files
    // module), a home ending at the next ':', an empty line, a line of
    // millions of ':' (split no further than the home: no field per colon).
    std::string odd = "\n" + std::string(4u << 20, ':') +
                      "\ndup:x:1004:1::/home/first:\ndup2:x:1004:1::/home/second\n"
                      "extra:x:1005:1::/home/extra::::more\nnohome:x:1006:1::\n";
    CHECK(profile::passwd_home(odd, 1004) == "/home/first");
    CHECK(profile::passwd_home(odd, 1005) == "/home/extra");
    CHECK(profile::passwd_home(odd, 1006) == "");
    CHECK(profile::passwd_home(odd, 0) == "");
}

TEST_CASE("profile: daemon sockets outside /run that any local user reaches are hidden (attack17)") {
    for (const char* p : {"/var/snap/lxd/common/lxd/unix.socket", "/var/lib/incus/unix.socket",
                          "/var/spool/postfix/public", "/var/lib/sss/pipes/pam"})
        CHECK(has(profile::daemon_sockets(), p));
    // SSSD's NSS pipe stays: user and group names must still resolve inside.
    CHECK_FALSE(has(profile::daemon_sockets(), "/var/lib/sss/pipes/nss"));
}

TEST_CASE("profile: the secret preset covers the issue's list") {
    for (const char* p :
         {".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json", ".netrc", ".npmrc",
          ".pypirc", ".git-credentials", ".config/gh", ".password-store", ".local/share/keyrings", ".mozilla",
          ".config/google-chrome", ".config/chromium", ".config/layover"})
        CHECK(has(profile::secret_paths(), p));
}

TEST_CASE("mountinfo: aliases of a path through bind mounts of the same filesystem") {
    std::string text =
        "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        "40 22 8:1 /home/u /mnt/alias rw - ext4 /dev/sda1 rw\n"
        "41 22 8:1 /home/u/.ssh /srv/keys rw - ext4 /dev/sda1 rw\n"
        "42 22 8:2 / /data rw - ext4 /dev/sdb1 rw\n"
        "43 22 8:1 /var /mnt/var rw - ext4 /dev/sda1 rw\n";
    auto m = overlay::parse_mountinfo(text);
    REQUIRE(m[1].root == "/home/u");
    REQUIRE(m[1].dev == "8:1");
    auto a = overlay::aliases_of(m, "/home/u/.ssh");
    CHECK(a == std::vector<std::string>{"/mnt/alias/.ssh", "/srv/keys"});
    // From the alias side back to the original, and nothing on another device.
    auto b = overlay::aliases_of(m, "/mnt/alias/.ssh/id");
    CHECK(b == std::vector<std::string>{"/home/u/.ssh/id", "/srv/keys/id"});
    CHECK(overlay::aliases_of(m, "/data/x").empty());
}

TEST_CASE("hide: the plan resolves symlinks, skips what is absent, keeps in-target names") {
    std::optional<testtree::TempDir> tmp{std::in_place};
    std::string root = tmp->path;
    std::string home = root + "/home", proj = home + "/proj";
    REQUIRE(::mkdir(home.c_str(), 0755) == 0);
    REQUIRE(::mkdir(proj.c_str(), 0755) == 0);
    REQUIRE(::mkdir((root + "/realssh").c_str(), 0700) == 0);
    REQUIRE(::symlink((root + "/realssh").c_str(), (home + "/.ssh").c_str()) == 0);
    std::ofstream(home + "/.netrc") << "x";
    std::ofstream(proj + "/.env") << "x";

    HideRequest req{home, proj, proj, true, {".env", "missing"}, {}, {}};
    auto plan = plan_hide(req, {});
    REQUIRE(plan.ok());
    CHECK(plan->mounts == std::vector<std::string>{root + "/realssh", home + "/.netrc", proj + "/.env"});
    CHECK(plan->shown == std::vector<std::string>{"~/.ssh", "~/.netrc"});
    CHECK(plan->user_shown == std::vector<std::string>{"~/proj/.env"});  // --hide's own, under ~ as typed
    CHECK(plan->in_target == std::vector<std::string>{".env", "missing"});

    // Over the home: every preset name is excluded from capture, present or not.
    HideRequest whole{home, home, home, true, {}, {}, {}};
    auto p2 = plan_hide(whole, {});
    REQUIRE(p2.ok());
    CHECK(has(p2->in_target, ".aws"));
    CHECK(has(p2->in_target, ".ssh"));
    CHECK_FALSE(has(p2->mounts, home + "/.aws"));  // absent: nothing mounted, nothing created

    // A target inside a hidden dir is not hidden from itself.
    HideRequest inside{home, root + "/realssh", root, true, {}, {}, {}};
    auto p3 = plan_hide(inside, {});
    REQUIRE(p3.ok());
    CHECK(p3->notes.size() == 1);
    CHECK(p3->notes[0].find("not hiding ~/.ssh") == 0);

    // --no-hide-secrets: only what was asked.
    HideRequest none{home, proj, proj, false, {}, {}, {}};
    CHECK(plan_hide(none, {})->mounts.empty());

    // $HOME elsewhere (a harness's scratch HOME): the account's home keeps
    // its secrets hidden too, named by their full path (attack17); the same
    // home twice adds nothing.
    std::string scratch = root + "/scratch";
    REQUIRE(::mkdir(scratch.c_str(), 0755) == 0);
    HideRequest elsewhere{scratch, proj, proj, true, {}, {}, home};
    auto p4 = plan_hide(elsewhere, {});
    REQUIRE(p4.ok());
    CHECK(p4->mounts == std::vector<std::string>{root + "/realssh", home + "/.netrc"});
    CHECK(p4->shown == std::vector<std::string>{home + "/.ssh", home + "/.netrc"});
    HideRequest same{home, proj, proj, true, {}, {}, home};
    CHECK(plan_hide(same, {})->mounts == std::vector<std::string>{root + "/realssh", home + "/.netrc"});
    CHECK(removed(tmp));
}

TEST_CASE("hide: missing paths are kept missing as spelled and where they would resolve") {
    std::optional<testtree::TempDir> tmp{std::in_place};
    std::string root = tmp->path;
    std::string home = root + "/home", dots = home + "/dotfiles/config";
    REQUIRE(::mkdir(home.c_str(), 0755) == 0);
    REQUIRE(::mkdir((home + "/dotfiles").c_str(), 0755) == 0);
    REQUIRE(::mkdir(dots.c_str(), 0755) == 0);
    REQUIRE(::symlink("dotfiles/config", (home + "/.config").c_str()) == 0);
    std::ofstream(home + "/afile") << "x";
    HideRequest req{home, home, home, true, {"afile/below", "new/deeper/x", "../outside"}, {}, {}};
    auto plan = plan_hide(req, {});
    REQUIRE(plan.ok());
    CHECK(has(plan->missing, home + "/.aws"));
    CHECK(has(plan->missing, home + "/.config/gh"));  // as spelled
    CHECK(has(plan->missing, dots + "/gh"));          // and where ~/.config leads
    CHECK(has(plan->in_target, "dotfiles/config/gh"));
    CHECK(has(plan->missing, home + "/new/deeper/x"));
    CHECK(has(plan->missing, home + "/afile/below"));  // kept; the mask finds a file in the way
    CHECK_FALSE(has(plan->missing, home + "/afile"));
    CHECK(has(plan->missing, root + "/outside"));
    CHECK(removed(tmp));
}

TEST_CASE("hide: a dangling symlink, as a secret or above one, is kept missing where it leads") {
    std::optional<testtree::TempDir> tmp{std::in_place};
    std::string root = tmp->path;
    std::string home = root + "/home";
    REQUIRE(::mkdir(home.c_str(), 0755) == 0);
    REQUIRE(::symlink("vault/kube", (home + "/.kube").c_str()) == 0);         // the secret itself
    REQUIRE(::symlink("dotfiles/config", (home + "/.config").c_str()) == 0);  // a parent of one
    REQUIRE(::symlink(root.c_str(), (home + "/up").c_str()) == 0);            // absolute, then ".."
    HideRequest req{home, home, home, true, {"up/home/x/../y"}, {}, {}};
    auto plan = plan_hide(req, {});
    REQUIRE(plan.ok());
    CHECK(has(plan->missing, home + "/vault/kube"));
    CHECK(has(plan->in_target, "vault/kube"));
    CHECK_FALSE(has(plan->missing, home + "/.kube"));  // a symlink: nothing to whiteout there
    CHECK(has(plan->missing, home + "/.config/gh"));
    CHECK(has(plan->missing, home + "/dotfiles/config/gh"));
    CHECK(has(plan->in_target, "dotfiles/config/gh"));
    CHECK(has(plan->missing, home + "/x/../y"));  // x is missing: the rest as spelled
    CHECK(removed(tmp));
}

TEST_CASE("mask: a path made on the host between the plan and the mask is whited out too") {
    std::optional<testtree::TempDir> tmp{std::in_place};
    std::string root = tmp->path;
    // The plan found all of these missing; since, "a" and "d" were made.
    REQUIRE(::mkdir((root + "/a").c_str(), 0755) == 0);
    REQUIRE(::mkdir((root + "/d").c_str(), 0755) == 0);
    std::ofstream(root + "/d/e") << "SECRET";
    base::Fd real(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    auto m = overlay::build_mask(real.get(), {"a", "b/c", "d", "d/e"});
    if (!m && m.error().message.find("Operation not permitted") != std::string::npos) {
        WARN("no tmpfs here: " << m.error().message);  // unprivileged: the integration tests cover it
    } else {
        REQUIRE(m.ok());
        REQUIRE(m->valid());
        auto whiteout = [&](const char* p) {
            struct stat st;
            return ::fstatat(m->get(), p, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == 0;
        };
        CHECK(whiteout("a"));  // before: shown, neither covered nor masked
        CHECK(whiteout("b"));
        CHECK(whiteout("d"));  // and nothing below it
    }
    CHECK(removed(tmp));
}

TEST_CASE("mask: each missing path goes to the overlay of the deepest root holding it") {
    std::vector<std::string> roots{"/h/proj", "/h", "/data"};
    std::vector<std::string> missing{"/h/.aws",      "/h/proj/.env", "/h/proj", "/data/x/y",
                                     "/elsewhere/z", "/h/a/../.ssh", "/h/..x"};
    CHECK(overlay::mask_rels("/h", roots, missing) == std::vector<std::string>{".aws", "..x"});
    CHECK(overlay::mask_rels("/h/proj", roots, missing) == std::vector<std::string>{".env"});
    CHECK(overlay::mask_rels("/data", roots, missing) == std::vector<std::string>{"x/y"});
    CHECK(overlay::mask_rels("/", {"/"}, {"/a/b"}) == std::vector<std::string>{"a/b"});
}

TEST_CASE("hide: the undo stores in the target, above it and in the home are covered, silently") {
    std::optional<testtree::TempDir> tmp{std::in_place};
    std::string root = tmp->path;
    std::string home = root + "/home", proj = home + "/proj", other = root + "/other";
    for (const auto& d : {home, proj, other, proj + "/.layover-undo", home + "/.layover-undo"})
        REQUIRE(::mkdir(d.c_str(), 0700) == 0);
    REQUIRE(::symlink("elsewhere", (root + "/.layover-undo").c_str()) == 0);  // not a store: left alone
    HideRequest req{home, proj, proj, false, {}, {}, {}};
    auto plan = plan_hide(req, {});
    REQUIRE(plan.ok());
    CHECK(plan->mounts == std::vector<std::string>{proj + "/.layover-undo", home + "/.layover-undo"});
    CHECK(plan->shown.empty());
    CHECK(plan->in_target.empty());  // an agent's own .layover-undo is still captured (and refused by apply)
    CHECK(plan->notes.empty());
    // A target outside the home: the home's store too.
    HideRequest out{home, other, other, false, {}, {}, {}};
    CHECK(plan_hide(out, {})->mounts == std::vector<std::string>{home + "/.layover-undo"});
    // Below the target: the stores the state dir lists (undo_trees.h), those that exist.
    std::string below = proj + "/sub/.layover-undo";
    REQUIRE(::mkdir((proj + "/sub").c_str(), 0700) == 0);
    REQUIRE(::mkdir(below.c_str(), 0700) == 0);
    REQUIRE(::mkdir((other + "/.layover-undo").c_str(), 0700) == 0);
    HideRequest over{home, home, home, false, {}, {below, other + "/.layover-undo", home + "/gone/.layover-undo"}, {}};
    auto p4 = plan_hide(over, {});
    REQUIRE(p4.ok());
    CHECK(has(p4->mounts, below));
    CHECK(has(p4->mounts, other + "/.layover-undo"));            // outside the target: the read-only view shows it
    CHECK_FALSE(has(p4->mounts, home + "/gone/.layover-undo"));  // listed, gone
    CHECK(p4->in_target.empty());
    // A sibling tree's (review13): the home's scratch layer shows it.
    std::string sib = home + "/sib/.layover-undo";
    REQUIRE(::mkdir((home + "/sib").c_str(), 0700) == 0);
    REQUIRE(::mkdir(sib.c_str(), 0700) == 0);
    HideRequest beside{home, proj, proj, false, {}, {sib}, {}};
    CHECK(has(plan_hide(beside, {})->mounts, sib));
    CHECK(removed(tmp));
}

TEST_CASE("run: the isolation profile's options") {
    auto r = parse_run_args({"--hide", "/a", "--hide=/b", "--no-hide-secrets", "--env-keep", "GH_*", "--env", "A=1",
                             "--env-clear", "-q", "--network", "none", "cmd"});
    REQUIRE(r.ok());
    CHECK(r->hide == std::vector<std::string>{"/a", "/b"});
    CHECK_FALSE(r->hide_secrets);
    CHECK(r->env_keep == std::vector<std::string>{"GH_*"});
    CHECK(r->env_set == std::vector<std::string>{"A=1"});
    CHECK(r->env_clear);
    CHECK(r->quiet);
    CHECK(r->network == "none");
    CHECK(parse_run_args({"cmd"})->hide_secrets);
    CHECK(parse_run_args({"cmd"})->network == "loopback");
    CHECK(parse_run_args({"--env", "1A=x"}).error().message.find("NAME=VALUE") != std::string::npos);
    CHECK(parse_run_args({"--env", "NOEQ"}).error().message.find("NAME=VALUE") != std::string::npos);
    CHECK(parse_run_args({"--hide", ""}).error().message.find("--hide needs a path") != std::string::npos);
}

TEST_CASE("undo trees: each store listed once, in the order added, a cut-off entry dropped") {
    std::optional<testtree::TempDir> tmp{std::in_place};
    std::string state = tmp->path;
    CHECK(session::tree_stores(state).empty());
    session::note_tree_store(state, "/w/a/.layover-undo");
    session::note_tree_store(state, "/w/b\n/.layover-undo");
    session::note_tree_store(state, "/w/a/.layover-undo");
    std::ofstream(state + "/undo-trees", std::ios::app) << "/w/cut/.layover";  // a crash mid-append
    CHECK(session::tree_stores(state) == std::vector<std::string>{"/w/a/.layover-undo", "/w/b\n/.layover-undo"});
    session::note_tree_store(state, "/w/c/.layover-undo");  // after the cut-off one, apart from it
    CHECK(session::tree_stores(state) ==
          std::vector<std::string>{"/w/a/.layover-undo", "/w/b\n/.layover-undo", "/w/c/.layover-undo"});
    CHECK(removed(tmp));
}

TEST_CASE("undo trees: a list past 1 MiB (thousands of trees) is still read: its stores stay hidden") {
    std::optional<testtree::TempDir> tmp{std::in_place};
    std::string state = tmp->path;
    std::string pad(200, 'p');
    {
        std::ofstream f(state + "/undo-trees", std::ios::binary);
        for (int i = 0; i < 6000; i++) f << "/w/" << pad << i << "/.layover-undo" << '\0';
        f << "/w/a/.layover-undo" << '\0' << "/w/" << pad << 1 << "/.layover-undo" << '\0';  // a repeat
    }
    auto listed = session::tree_stores(state);  // 1.3 MB: it read as nothing at the old 1 MiB cap
    REQUIRE(listed.size() == 6001);
    CHECK(listed.front() == "/w/" + pad + "0/.layover-undo");
    CHECK(listed.back() == "/w/a/.layover-undo");
    session::note_tree_store(state, "/w/a/.layover-undo");  // listed already: not again
    session::note_tree_store(state, "/w/new/.layover-undo");
    listed = session::tree_stores(state);
    CHECK(listed.size() == 6002);
    CHECK(listed.back() == "/w/new/.layover-undo");
    CHECK(removed(tmp));
}

TEST_CASE("undo trees: past 16 MiB, a new store is still listed: the stores gone are dropped (attack51)") {
    // Appended past the 16 MiB read, a new store was never seen: not
    // covered by any sandbox, and listed again by each apply of its tree.
    std::optional<testtree::TempDir> tmp{std::in_place};
    std::string state = tmp->path;
    std::string live = state + "/live/.layover-undo", fresh = state + "/fresh/.layover-undo";
    for (const auto& d : {state + "/live", live, state + "/fresh", fresh}) REQUIRE(::mkdir(d.c_str(), 0700) == 0);
    std::string pad(240, 'p');
    {
        std::ofstream f(state + "/undo-trees", std::ios::binary);
        f << live << '\0';
        for (int i = 0; i < 70000; i++) f << "/gone/" << pad << i << "/.layover-undo" << '\0';  // ~18.6 MB
    }
    session::note_tree_store(state, fresh);
    auto listed = session::tree_stores(state);
    CHECK(std::find(listed.begin(), listed.end(), fresh) != listed.end());  // it was appended past the read
    CHECK(listed.size() == 2);
    CHECK(listed.front() == live);
    struct stat st {};
    REQUIRE(::stat((state + "/undo-trees").c_str(), &st) == 0);
    CHECK(st.st_size < 4096);                // the stores gone, dropped
    session::note_tree_store(state, fresh);  // listed: not again
    CHECK(session::tree_stores(state).size() == 2);
    CHECK(removed(tmp));
}

TEST_CASE("undo trees: a corrupt list of a terabyte (sparse) is rewritten, not read whole into memory (attack52)") {
    // The rewrite past 16 MiB read the whole list: std::bad_alloc out of apply.
    std::optional<testtree::TempDir> tmp{std::in_place};
    std::string state = tmp->path;
    std::string fresh = state + "/fresh/.layover-undo";
    for (const auto& d : {state + "/fresh", fresh}) REQUIRE(::mkdir(d.c_str(), 0700) == 0);
    {
        base::Fd f(::open((state + "/undo-trees").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        REQUIRE(f.valid());
        REQUIRE(::ftruncate(f.get(), off_t{1} << 40) == 0);
    }
    REQUIRE_NOTHROW(session::note_tree_store(state, fresh));
    CHECK(session::tree_stores(state) == std::vector<std::string>{fresh});
    CHECK(removed(tmp));
}

TEST_CASE("scratch: the exit line counts the files and says how many an earlier run wrote") {
    scratch::Summary s;
    CHECK(scratch::summary_line(s).empty());
    s.files = 3210;
    s.under = {"~/.npm", "~/.cache/pip"};
    CHECK(scratch::summary_line(s) == "outside the target (not applied): 3,210 files under ~/.npm, ~/.cache/pip");
    s.earlier = 12;
    CHECK(scratch::summary_line(s) ==
          "outside the target (not applied): 3,210 files under ~/.npm, ~/.cache/pip (12 of them from earlier runs)");
    s.files = 1;
    s.earlier = 1;
    s.under = {"~/.x"};
    CHECK(scratch::summary_line(s) == "outside the target (not applied): 1 file under ~/.x (from earlier runs)");
}

TEST_CASE("scratch: a group that is one file is named as it is, not as a dir files are under") {
    scratch::Summary s;
    s.files = 1;
    s.under = {"~/.bash_history"};
    s.counts = {1};
    s.is_file = {1};
    CHECK(scratch::summary_line(s) == "outside the target (not applied): 1 file: ~/.bash_history");
    s.files = 3;
    s.under = {"~/code", "~/.bash_history"};
    s.counts = {2, 1};
    s.is_file = {0, 1};
    CHECK(scratch::summary_line(s) == "outside the target (not applied): 3 files: 2 under ~/code, ~/.bash_history");
    s.is_file = {0, 0};  // dirs alone: as before
    CHECK(scratch::summary_line(s) == "outside the target (not applied): 3 files under ~/code, ~/.bash_history");
}
