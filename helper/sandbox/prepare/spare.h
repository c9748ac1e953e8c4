// A new session's first dirs made ahead (issue 20): the session dir with an
// empty `upper/`, `work/` and `steps/` (and a first scratch layer's), kept
// as STATE/spare/next. On ext4 a dir under
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

// Mark `dir` a top of hierarchy (FS_TOPDIR_FL, as /home is): ext4's Orlov
// allocator spreads the dirs made in it over block groups. Best effort:
// other file systems have no such flag.
void mark_top_dir(const std::string& dir);

// Make STATE/spare/next (dir 0700, upper 0755, work and steps 0700; with
// `scratch`, the first scratch layer's outside/0/upper and work too, as the
// discarded session had) unless one is there. Best effort: a failure leaves
// no spare, and runs make their dirs. First it removes what a remover killed
// while making one left (STATE/spare/tmp.PID of a pid no longer running).
void make_spare(const std::string& state, bool scratch);

// Move the spare to `dir` (never over an existing name). False when there is
// none, a concurrent run took it, or it cannot move there: make the dirs.
bool take_spare(const std::string& state, const std::string& dir);
