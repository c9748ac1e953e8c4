#include "review/apply/stage_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "helper/base/fs/beneath.h"
#include "helper/base/interrupt.h"
#include "helper/base/text.h"
#include "review/txn/fault.h"

namespace review::staging {

// Writeback is started every this many bytes, so the fsync before
// commit waits for the tail only, not for the whole file.
constexpr uint64_t kWritebackChunk = 8ull << 20;

base::Error staging_error(const std::string& path, const base::Error& e) {
    std::string why = e.message;
    if (e.code == ENOSPC || e.code == EDQUOT) why += " (the target's filesystem is full)";
    if (e.code == EACCES || e.code == EPERM)  // not the temporary name: the directory, and the fix
        why = "its directory on the target is not writable (" + std::string(std::strerror(e.code)) +
              "); make it writable (chmod u+w) and apply again";
    if (e.code == EROFS) why = "the target's filesystem is read-only (" + std::string(std::strerror(e.code)) + ")";
    return base::Error{"staging " + base::display_path(path) + ": " + why, e.code};
}

void note_stat(Target& t, int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return;
    t.after = entry_stat(st, "");
    t.stat_ok = true;
}

// A file staged beside its destination, in a real dir, is created 0600.
// One inside a new tree is created with its own permission bits: the
// tree's staged dirs are 0700 until all its entries are finished
// (dir_attrs), so no one else can reach it before then either, and the
// fchmod after is saved when the umask and a default ACL leave its bits
// whole (finish_file's fstat says; else it is chmodded as before).
base::Result<void> open_file(FileOut& out, Target& t) {
    TRY(auto at, at_beneath(out.dirs, t.staged));
    out.own_mode = !t.root;
    mode_t mode = out.own_mode ? (t.m->mode & 0777) : 0600;
    TRY(out.cur, base::open_at(at.first, at.second, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode));
    out.target = &t;
    out.kicked = 0;
    out.written = 0;
    return base::Ok();
}

base::Result<void> begin_file(StageCtx& ctx, FileOut& out, Target& t) {
    TRY_VOID(finish_file(ctx, out));
    auto r = open_file(out, t);
    if (!r.ok()) return staging_error(t.m->path, r.error());
    return base::Ok();
}

base::Result<void> write_chunk(StageCtx& ctx, FileOut& out, uint64_t off, const char* data, size_t len) {
    while (len > 0) {
        ssize_t n = ::pwrite(out.cur.get(), data, len, static_cast<off_t>(off));
        if (n < 0) {
            if (errno == EINTR) continue;
            return staging_error(out.target->m->path, base::sys_error("write"));
        }
        data += n;
        len -= static_cast<size_t>(n);
        off += static_cast<uint64_t>(n);
        ctx.progress.add(static_cast<uint64_t>(n), 0);
    }
    if (off > out.written) out.written = off;
    if (off - out.kicked >= kWritebackChunk) {
        start_writeback(out.cur.get(), out.kicked, off);
        out.kicked = off;
    }
    return base::Ok();
}

base::Result<void> finish_file(StageCtx& ctx, FileOut& out) {
    if (!out.cur.valid()) return base::Ok();
    Target& t = *out.target;
    auto r = [&]() -> base::Result<void> {
        // Created empty: only a trailing hole (sparse) leaves the size short.
        if (out.written != t.size && ::ftruncate(out.cur.get(), static_cast<off_t>(t.size)) != 0)
            return base::sys_error("truncate");
        TRY_VOID(set_user_xattrs(out.cur.get(), t.m->xattrs, true));
        PlanItem& it = *t.item;
        if (t.root && it.unit.op == Op::Replace && it.before.type == capture::Type::File) {
            auto [parent, name] = split_parent(it.unit.path);
            TRY(int pfd, out.dirs.get(parent));
            TRY(base::Fd orig, base::open_at(pfd, name, O_PATH | O_NOFOLLOW));
            TRY_VOID(copy_acls(orig.get(), out.cur.get()));
        }
        TRY_VOID(set_mode_mtime(out.cur.get(), t.m->mode, t.m->mtime_ns, !out.own_mode));
        if (out.kicked > 0 || t.size >= (1u << 20)) start_writeback(out.cur.get(), out.kicked, t.size);
        note_stat(t, out.cur.get());  // last: nothing changes the file after this
        if (out.own_mode && (!t.stat_ok || t.after.mode != (t.m->mode & 0777))) {
            // The umask or the dir's default ACL took bits at the create.
            if (::fchmod(out.cur.get(), t.m->mode & 0777) != 0) return base::sys_error("chmod");
            t.stat_ok = false;
            note_stat(t, out.cur.get());
        }
        ctx.dur.keep(out.cur.get());  // mode 0000 would keep us from reopening it
        return out.cur.close();
    }();
    t.done = true;
    out.cur.reset();
    if (!r.ok()) return staging_error(t.m->path, r.error());
    TRY_VOID(fault_point("apply", "stage"));
    TRY_VOID(base::stop_if_interrupted());  // a Ctrl+C: rolled back, then raised again
    ctx.progress.add(0, 1);
    return base::Ok();
}

}  // namespace review::staging
