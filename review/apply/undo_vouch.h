// Whether an undo patch (`apply --undo-to FILE`) says no more than the undo
// record it names: `layover undo FILE` goes without --yes only then.
#pragma once
#include "capture/patch/reader.h"
#include "review/txn/txn.h"

namespace review {

// store_dir: the record t's undo store (.../ID), holding the originals. True
// when every path of t is a change of the patch and the patch restores
// nothing else: each change is a path of t or an entry beneath one whose
// original the store keeps, and what it writes there (type, permission bits,
// content or link target, and for a metadata change the xattrs) is that
// original's, as the store and the record keep it. Found by attack14: only the
// first half was checked, so a change added to an exported undo patch, or a
// restored file's content replaced, went without --yes.
bool undo_patch_within_record(int store_dir, const Txn& t, const capture::Patch& patch);

}  // namespace review
