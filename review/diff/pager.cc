#include "review/diff/pager.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "helper/base/text.h"

namespace review {

namespace {

bool in_path(const char* prog) {
    const char* path = std::getenv("PATH");
    std::string p = path ? path : "/usr/bin:/bin";
    size_t start = 0;
    for (;;) {
        size_t colon = p.find(':', start);
        std::string cand = p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        if (cand.empty()) cand.push_back('.');
        cand.push_back('/');
        cand.append(prog);
        if (::access(cand.c_str(), X_OK) == 0) return true;
        if (colon == std::string::npos) return false;
        start = colon + 1;
    }
}

}  // namespace

std::string pager_command(const char* pager_env, bool less_available) {
    if (!pager_env) return less_available ? "less -FRX" : "";
    std::string p = pager_env;
    if (p.find_first_not_of(" \t") == std::string::npos || p == "cat") return "";
    return p;
}

Output::Output(bool page, bool colors) {
    if (!page) return;
    const char* env = std::getenv("PAGER");
    std::string cmd = pager_command(env, !env && in_path("less"));
    if (cmd.empty()) return;
    // A plain $PAGER (no shell syntax) that is not there: said, and the
    // output shown unpaged, as git does (sh's "not found" took it all).
    std::string prog = cmd.substr(0, cmd.find_first_of(" \t"));
    if (env && cmd.find_first_of("|&;<>()$`\\\"'=*?[~") == std::string::npos &&
        (prog.find('/') == std::string::npos ? !in_path(prog.c_str()) : ::access(prog.c_str(), X_OK) != 0)) {
        std::fprintf(stderr,
                     "layover: cannot run the pager '%s' ($PAGER); showing the output unpaged (PAGER=cat "
                     "turns paging off)\n",
                     base::display_path(prog).c_str());
        return;
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    base::Fd rd(fds[0]), wr(fds[1]);
    pid_t pid = ::fork();
    if (pid < 0) return;
    if (pid == 0) {
        ::dup2(rd.get(), 0);
        // As git does: less passes colors through and quits on short output.
        ::setenv("LESS", std::getenv("LESS") ? std::getenv("LESS") : colors ? "FRX" : "FX", 1);
        ::setenv("LV", std::getenv("LV") ? std::getenv("LV") : "-c", 1);
        ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    pager_ = pid;
    pipe_ = std::move(wr);
    // A pager that quits early closes the pipe: EPIPE, not death by SIGPIPE.
    // Ctrl+C is for the pager (less stops scrolling), not for us.
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old_pipe_);
    ::sigaction(SIGINT, &ign, &old_int_);
    ::sigaction(SIGQUIT, &ign, &old_quit_);
}

Output::~Output() { finish(); }

base::Result<void> Output::write(std::string_view s) {
    if (closed_) return base::Ok();
    int fd = pipe_.valid() ? pipe_.get() : 1;
    auto r = base::write_all(fd, s.data(), s.size());
    if (!r && r.error().code == EPIPE) {
        closed_ = true;
        return base::Ok();
    }
    return r;
}

void Output::finish() {
    if (pager_ < 0) return;
    pipe_.reset();
    int st;
    while (::waitpid(pager_, &st, 0) < 0 && errno == EINTR) {
    }
    pager_ = -1;
    ::sigaction(SIGPIPE, &old_pipe_, nullptr);
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGQUIT, &old_quit_, nullptr);
}

PagedStdout::PagedStdout(bool page, bool colors) : out_(page, colors) {
    if (out_.pager_fd() < 0) return;
    std::fflush(stdout);
    saved_.reset(::fcntl(1, F_DUPFD_CLOEXEC, 3));
    if (!saved_.valid() || ::dup2(out_.pager_fd(), 1) < 0) saved_.reset();
}

PagedStdout::~PagedStdout() { finish(); }

void PagedStdout::finish() {
    std::fflush(stdout);
    if (saved_.valid()) {
        ::dup2(saved_.get(), 1);  // the pager sees EOF once out_ closes its end too
        saved_.reset();
    }
    out_.finish();
}

}  // namespace review
