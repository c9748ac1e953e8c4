// A new session's first dirs made ahead (issue 20): the session dir with an
// empty `upper/` and `work/`, kept as STATE/spare/next. On ext4 a dir under
// a "top of hierarchy" parent (STATE/sessions is one: prepare.cc) is placed
// by the Orlov allocator, which costs ~0.2 ms a mkdir here and, in a block
// group not touched lately, a synchronous bitmap read (several ms); a
// discard's remover, off every run's path, makes the next one, and a new
// session takes it with one rename (docs/performance.md, "Start-up, seventh
// pass").
#pragma once
#include <string>

// STATE/spare.
std::string spare_dir(const std::string& state);

// Make STATE/spare/next (dir 0700, upper 0755, work 0700) unless one is
// there. Best effort: a failure leaves no spare, and runs make their dirs.
void make_spare(const std::string& state);

// Move the spare to `dir` (never over an existing name). False when there is
// none, a concurrent run took it, or it cannot move there: make the dirs.
bool take_spare(const std::string& state, const std::string& dir);
