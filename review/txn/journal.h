// Per-target lock and crash journal, both in the state dir and keyed by the
// target root's device and inode (so two paths to one tree share them):
//   STATE/locks/DEV-INO.lock     flock held for a whole apply or undo
//   STATE/journal/DEV-INO.json   the running transaction (see txn.h)
#pragma once
#include <optional>
#include <string>

#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "review/txn/txn.h"

namespace review {

std::string target_key(uint64_t dev, uint64_t ino);
// The birth time of the tree open at `fd` (statx STATX_BTIME), in ns; 0 when
// its filesystem keeps none, or one that is no identity of the dir (an
// overlayfs copy-up changes it: journal.cc's list).
int64_t tree_birth_ns(int fd);

// Exclusive, non-blocking: a second apply/undo on the same tree fails clearly.
base::Result<base::Fd> lock_target(const std::string& state, const std::string& key, const std::string& target);

std::string journal_path(const std::string& state, const std::string& key);
base::Result<void> write_journal(const std::string& path, const Txn& t);
base::Result<std::optional<Txn>> read_journal(const std::string& path);
base::Result<void> remove_journal(const std::string& path);

// Write `content` to name in dirfd durably: temp (0600, O_EXCL) + fsync +
// rename + fsync of the directory.
base::Result<void> write_file_durably(int dirfd, const std::string& name, const std::string& content);

}  // namespace review
