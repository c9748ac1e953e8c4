// The patch reader's per-member rules (capture/patch/reader.cc validates a
// whole patch with them): each member's header turned into a Member (its
// name, kind, mode, mtime, xattrs and sparse map checked), and across the
// members: duplicates, paths both deleted and written, members beneath a
// non-dir, hard links to earlier files, and the stored and logical byte limits.
#pragma once
#include <archive.h>
#include <archive_entry.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "capture/patch/path_map.h"
#include "capture/patch/reader.h"
#include "helper/base/result.h"

namespace capture::member_check {

using base::Result;

inline std::string lim(uint64_t v) { return std::to_string(v); }

// Error messages stay one readable line even for absurdly long names.
std::string shown(const std::string& name);

class Validator {
public:
    explicit Validator(const Limits& l) : l_(l), paths_(0, true) {}
    // Room for the members the patch likely has (estimate: an upper bound,
    // about twice what most patches hold; the map grows past it if need be).
    void reserve(size_t estimate) { paths_.reserve(estimate / 2); }

    // One member's header turned into a Member, with every per-member rule;
    // *tar_name: its name as in the tar.
    Result<Member> member(archive_entry* e, std::string* tar_name);

    Result<void> add_stored(uint64_t n) {
        stored_ += n;
        if (stored_ > l_.max_stored_bytes)
            return base::error("the patch holds more than " + lim(l_.max_stored_bytes) +
                               " bytes of data (a zstd bomb?); raise --max-stored-bytes if you trust it");
        return base::Ok();
    }

private:
    // What the patch does to each path (PathMap values): one entry per path
    // member, and one per dir above a written one.
    static constexpr uint32_t kWritten = 1;    // a member other than a whiteout or an opaque mark
    static constexpr uint32_t kDeleted = 2;    // a whiteout
    static constexpr uint32_t kOpaque = 4;     // an opaque mark
    static constexpr uint32_t kDir = 8;        // a dir member
    static constexpr uint32_t kFile = 16;      // a regular file member (what a hard link may name)
    static constexpr uint32_t kBelow = 32;     // a written member lies beneath it
    static constexpr uint32_t kLeafShift = 8;  // the kind of a non-dir member, + 1 (0: none)
    static constexpr uint32_t kLeafMask = 0xfu << kLeafShift;
    static uint32_t leaf_bits(Member::Kind k) { return (static_cast<uint32_t>(k) + 1) << kLeafShift; }
    static const char* leaf_word(uint32_t v);
    // The dir above p (p shortened to it), false at the top.
    static bool up(std::string_view* p) {
        auto slash = p->rfind('/');
        if (slash == std::string_view::npos) return false;
        *p = p->substr(0, slash);
        return true;
    }

    // Duplicates, and paths both deleted and written.
    template <class Where>
    Result<void> place(const Member& m, const Where& where);

    template <class Where>
    Result<void> attrs(archive_entry* e, Member* m, const Where& where);

    const Limits& l_;
    uint64_t stored_ = 0, logical_ = 0;
    PathMap paths_;
    uint64_t leaves_ = 0, deleted_ = 0;  // non-dir members, whiteouts
};

}  // namespace capture::member_check
