// run's signals: what each does by how far the run has got, the queue kept
// for init, and the gate that blocks them from run's first instruction.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "helper/sandbox/prepare/run_signals.h"

using run_signals::Action;
using run_signals::Phase;

TEST_CASE("run signals: before the session dir a terminating signal cancels, after it waits for init",
          "[run_signals]") {
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
        CHECK(run_signals::action_for(sig, Phase::Starting) == Action::Cancel);
        CHECK(run_signals::action_for(sig, Phase::Made) == Action::Queue);
        CHECK(run_signals::action_for(sig, Phase::Running) == Action::Forward);
    }
    // SIGUSR1/2 mean something to the command only: they wait for it.
    for (int sig : {SIGUSR1, SIGUSR2}) {
        CHECK(run_signals::action_for(sig, Phase::Starting) == Action::Queue);
        CHECK(run_signals::action_for(sig, Phase::Running) == Action::Forward);
    }
    for (Phase p : {Phase::Starting, Phase::Made, Phase::Running}) {
        CHECK(run_signals::action_for(SIGWINCH, p) == Action::Resize);
        CHECK(run_signals::action_for(SIGCHLD, p) == Action::None);
    }
    CHECK(std::string(run_signals::name(SIGINT)) == "SIGINT");
    CHECK(std::string(run_signals::name(SIGCHLD)) == "a signal");
}

TEST_CASE("run signals: the queue for init keeps each signal once, in arrival order", "[run_signals]") {
    run_signals::Pending p;
    CHECK(p.empty());
    p.add(SIGTERM);
    p.add(SIGINT);
    p.add(SIGTERM);
    CHECK(p.take() == std::vector<int>{SIGTERM, SIGINT});
    CHECK(p.empty());
    CHECK(p.take().empty());
}

TEST_CASE("run signals: the gate holds a signal sent to the process, and gives back the mask it found",
          "[run_signals]") {
    sigset_t before;
    ::sigprocmask(SIG_SETMASK, nullptr, &before);
    {
        auto g = run_signals::Gate::block();
        REQUIRE(g.ok());
        CHECK(g->next() == 0);
        // Would end this process were it not blocked. To this thread: another
        // one of the test binary's may not have it blocked.
        REQUIRE(::pthread_kill(::pthread_self(), SIGTERM) == 0);
        CHECK(g->next() == SIGTERM);
        CHECK(g->next() == 0);
        ::pthread_kill(::pthread_self(), SIGUSR1);
        g->drain();
        CHECK(g->next() == 0);
        CHECK(::sigismember(&g->original(), SIGTERM) == ::sigismember(&before, SIGTERM));
        ::sigprocmask(SIG_SETMASK, &g->original(), nullptr);
    }
    sigset_t after;
    ::sigprocmask(SIG_SETMASK, nullptr, &after);
    CHECK(::sigismember(&after, SIGINT) == ::sigismember(&before, SIGINT));
}

TEST_CASE("run signals: one ignored at entry stays ignored; an ignored SIGCHLD is reset, as run reaps",
          "[run_signals]") {
    struct sigaction ign {
    }, old_usr2, old_chld;
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGUSR2, &ign, &old_usr2);
    ::sigaction(SIGCHLD, &ign, &old_chld);
    {
        auto g = run_signals::Gate::block();
        REQUIRE(g.ok());
        struct sigaction now;
        ::sigaction(SIGCHLD, nullptr, &now);
        CHECK(now.sa_handler == SIG_DFL);
        ::pthread_kill(::pthread_self(), SIGUSR2);  // discarded by the kernel, as before run
        CHECK(g->next() == 0);
        ::sigprocmask(SIG_SETMASK, &g->original(), nullptr);
    }
    ::sigaction(SIGUSR2, &old_usr2, nullptr);
    ::sigaction(SIGCHLD, &old_chld, nullptr);
}
