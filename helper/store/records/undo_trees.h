// The undo stores apply keeps in the user's tree (TARGET/.layover-undo, when
// the state dir is on another filesystem), listed in the state dir so that a
// sandbox over a dir above one can hide it (helper/sandbox/policy/hide.cc): they
// hold the originals an apply deleted or replaced, a secret's too. The list
// is STATE/undo-trees: absolute paths of those .layover-undo dirs, each
// ended by a NUL (a path may hold a newline).
#pragma once
#include <string>
#include <vector>

namespace session {

// Adds `store_dir` (absolute) unless listed. Best effort: a store left out
// is hidden as before (when it is the target's own, or above it).
void note_tree_store(const std::string& state, const std::string& store_dir);

// The listed dirs, once each, in the order added; none when there is no
// list (or it cannot be read).
std::vector<std::string> tree_stores(const std::string& state);

}  // namespace session
