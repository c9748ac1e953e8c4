// review::read_real_side (source.h), apart from the patch reader so that
// `layover` itself, which links no libarchive, reads sides too (status's
// rejections, helper/cli/session/session_rejections.cc).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "review/diff/source.h"

namespace review {

namespace {

bool absent_errno(int e) { return e == ENOENT || e == ENOTDIR || e == ELOOP || e == EXDEV; }

base::Result<std::string> read_limited(int fd, uint64_t size) {
    std::string data;
    data.resize(size);
    size_t got = 0;
    while (got < size) {
        ssize_t n = ::read(fd, data.data() + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return base::sys_error("read");
        if (n == 0) break;  // shrank meanwhile: show what is there
        got += static_cast<size_t>(n);
    }
    data.resize(got);
    return data;
}

}  // namespace

base::Result<Side> read_real_side(int root, const std::string& rel, uint64_t max_load) {
    Side side;
    auto fd = open_beneath(root, rel, O_PATH | O_NOFOLLOW);
    if (!fd) {
        if (absent_errno(fd.error().code)) return side;
        return fd.error();
    }
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) return base::sys_error("stat " + base::display_path(rel));
    if (S_ISLNK(st.st_mode)) {
        std::string buf(static_cast<size_t>(st.st_size) + 1, '\0');
        ssize_t n = ::readlinkat(fd->get(), "", buf.data(), buf.size());
        if (n < 0) return base::sys_error("read link " + base::display_path(rel));
        buf.resize(static_cast<size_t>(n));
        side.exists = true;
        side.mode = kGitSymlink;
        side.size = buf.size();
        side.data = std::move(buf);
        return side;
    }
    if (!S_ISREG(st.st_mode)) return side;  // dirs, fifos, devices: nothing git could show
    side.exists = true;
    side.mode = git_file_mode(st.st_mode);
    side.perm = st.st_mode & 07777;
    side.size = static_cast<uint64_t>(st.st_size);
    if (side.size > max_load) {
        side.loaded = false;
        return side;
    }
    // O_NONBLOCK: should a fifo have replaced the file since, open must not hang.
    auto rd = open_beneath(root, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (!rd) {
        if (absent_errno(rd.error().code)) return Side{};
        if (rd.error().code ==
            EACCES) {  // mode 000: shown as binary, as a file too big to hold; apply calls it a conflict
            side.loaded = false;
            return side;
        }
        return rd.error().context("reading the real " + base::display_path(rel));
    }
    if (::fstat(rd->get(), &st) != 0 || !S_ISREG(st.st_mode)) return Side{};
    side.size = static_cast<uint64_t>(st.st_size);
    if (side.size > max_load) {
        side.loaded = false;
        return side;
    }
    TRY(side.data, read_limited(rd->get(), side.size));
    side.size = side.data.size();
    return side;
}

}  // namespace review
