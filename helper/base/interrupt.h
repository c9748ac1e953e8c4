// Ctrl+C during a change to the real tree (apply's staging and commit): an
// InterruptDeferral holds a SIGINT, SIGTERM or SIGHUP the process does not
// otherwise handle (run's supervisor and the review prompt keep theirs);
// interrupt_pending() says which arrived, so staging stops and rolls back,
// while the commit runs to its end. When the deferral ends the signal is
// raised again: the process still dies by it, after the tree is whole again
// (found by the attack pass of 27 Nov: a Ctrl+C of apply left the tree
// half-applied, with `.layover-tmp.*` files, until the next apply or undo).
// A DeferredInterruptTaker alive around it (the verb) takes the signal
// instead and raises it when it ends, after the verb has said what was done.
#pragma once

#include "helper/base/result.h"

namespace base {

class InterruptDeferral {
public:
    InterruptDeferral();
    ~InterruptDeferral();
    InterruptDeferral(const InterruptDeferral&) = delete;
    InterruptDeferral& operator=(const InterruptDeferral&) = delete;
};

class DeferredInterruptTaker {
public:
    DeferredInterruptTaker();
    ~DeferredInterruptTaker();  // raises the signal an InterruptDeferral held, if any
    DeferredInterruptTaker(const DeferredInterruptTaker&) = delete;
    DeferredInterruptTaker& operator=(const DeferredInterruptTaker&) = delete;
};

// The signal held so far (SIGINT, SIGTERM, SIGHUP), 0 when none.
int interrupt_pending();
// An error naming the signal held, for a step that stops (and rolls back) on it.
Result<void> stop_if_interrupted();

}  // namespace base
