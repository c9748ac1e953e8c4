#include "review/apply/space.h"

#include <sys/statvfs.h>

#include <cstdint>

#include "helper/base/text.h"

namespace review {
namespace {

using capture::Member;

uint64_t stored_bytes(const Member& m) {
    if (m.sparse.empty()) return m.size;
    uint64_t n = 0;
    for (const auto& seg : m.sparse) n += seg.second;
    return n;
}

uint64_t round_up(uint64_t n, uint64_t block) {
    if (n == 0) return 0;
    uint64_t r = n % block;
    return r == 0 || n > UINT64_MAX - block ? n : n + (block - r);
}

void add(SpaceNeed& need, uint64_t bytes, uint64_t block) {
    uint64_t b = round_up(bytes, block);
    need.bytes = b > UINT64_MAX - need.bytes ? UINT64_MAX : need.bytes + b;
}

// What an entry takes besides a file's data, counted as a disk that keeps
// little in the inode does (ext4): a dir's first block, a symlink target too
// long for the inode (ext4 keeps < 60 bytes there; tmpfs takes a page past
// 128), xattrs past what a 256-byte inode keeps in a block of their own.
// Found by attack22: a patch of 3,000 symlinks of 4,000-byte targets (a few
// KB of zstd) passed the check and filled an 8 MiB disk.
constexpr uint64_t kInlineLink = 60;
constexpr uint64_t kInlineXattrs = 64;  // names and values

void add_xattrs(SpaceNeed& need, const Member& m, uint64_t block) {
    uint64_t x = 0;
    for (const auto& [name, value] : m.xattrs) x += name.size() + value.size();
    if (x >= kInlineXattrs) add(need, x, block);
}

void add_metadata(SpaceNeed& need, const Member& m, uint64_t block) {
    if (m.kind == Member::Kind::Dir) add(need, 1, block);
    if (m.kind == Member::Kind::Symlink && m.link_target.size() >= kInlineLink)
        add(need, m.link_target.size() + 1, block);
    add_xattrs(need, m, block);
}

void add_member(SpaceNeed& need, const Member& m, uint64_t block) {
    if (m.kind == Member::Kind::Hardlink || m.kind == Member::Kind::Whiteout || m.kind == Member::Kind::Opaque) return;
    need.entries++;
    if (m.kind == Member::Kind::File) add(need, stored_bytes(m), block);
    add_metadata(need, m, block);
}

}  // namespace

SpaceNeed space_needed(const std::vector<PlanItem>& items, uint64_t block) {
    if (block == 0) block = 1;
    SpaceNeed need;
    for (const auto& it : items) {
        if (it.unit.op == Op::Meta) {  // the entry is there: only xattrs it gains may take room
            if (it.member) add_xattrs(need, *it.member, block);
            continue;
        }
        if (it.member) {
            if (it.content && it.member->kind == Member::Kind::File) {
                need.entries++;
                add(need, it.content->size(), block);
                add_metadata(need, *it.member, block);
            } else {
                add_member(need, *it.member, block);
            }
        }
        for (const Member* m : it.tree) add_member(need, *m, block);
        if (it.unit.op == Op::InPlace) {  // the original is copied into the undo store
            need.entries++;
            add(need, it.before.size, block);
        }
    }
    return need;
}

std::string space_problem(const SpaceNeed& need, uint64_t bytes_free, uint64_t files_free) {
    if (need.bytes > bytes_free)
        return "the target's filesystem has " + base::bytes_text(bytes_free) + " free, and this apply writes " +
               base::bytes_text(need.bytes) + "; nothing was applied (free space, or leave changes out with --exclude)";
    if (need.entries > files_free)
        return "the target's filesystem has " + std::to_string(files_free) + " free inodes, and this apply makes " +
               std::to_string(need.entries) +
               " entries; nothing was applied (free some, or leave changes out with --exclude)";
    return "";
}

base::Result<void> check_free_space(int root, const std::vector<PlanItem>& items) {
    struct statvfs sv {};
    if (::fstatvfs(root, &sv) != 0) return base::Ok();
    uint64_t block = sv.f_frsize ? sv.f_frsize : sv.f_bsize;
    SpaceNeed need = space_needed(items, block);
    uint64_t bytes_free = static_cast<uint64_t>(sv.f_bavail) * block;
    if (sv.f_bavail != 0 && bytes_free / sv.f_bavail != block) bytes_free = UINT64_MAX;  // overflow
    // One that does not count its blocks reports a size of 0 (some FUSE and
    // network filesystems): nothing to check against, as for inodes below.
    if (sv.f_blocks == 0) bytes_free = UINT64_MAX;
    // A filesystem that does not count inodes reports 0 of them (btrfs).
    uint64_t files_free = sv.f_files == 0 ? UINT64_MAX : static_cast<uint64_t>(sv.f_favail);
    std::string why = space_problem(need, bytes_free, files_free);
    if (!why.empty()) return base::error(why);
    return base::Ok();
}

}  // namespace review
