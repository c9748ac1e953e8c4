#include "review/txn/durable.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <system_error>

#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"

namespace review {

void start_writeback(int fd, uint64_t from, uint64_t to) {
    if (to <= from) return;
    // Advisory: a failure here shows up again, and is reported, at the fsync.
    (void)::sync_file_range(fd, static_cast<off_t>(from), static_cast<off_t>(to - from), SYNC_FILE_RANGE_WRITE);
}

void Durability::grow() {
    if (!overflow_ && fds_.size() + dirs_.size() + nodes_.size() > kMaxEntries) {
        overflow_ = true;
        fds_.clear();
        dirs_.clear();
        nodes_.clear();
    }
}

void Durability::keep(int fd) {
    if (overflow_) return;
    std::lock_guard<std::mutex> l(mu_);
    if (overflow_) return;
    int d = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (d < 0) {
        overflow_ = true;  // out of fds: fall back to syncfs rather than skip a sync
        return;
    }
    fds_.emplace_back(d);
    grow();
}

void Durability::dir(const std::string& rel) {
    std::lock_guard<std::mutex> l(mu_);
    if (overflow_) return;
    dirs_.insert(rel);
    grow();
}

void Durability::node(const std::string& rel) {
    std::lock_guard<std::mutex> l(mu_);
    if (overflow_) return;
    nodes_.insert(rel);
    grow();
}

base::Result<void> Durability::flush(int root, DirCache& dirs) {
    std::lock_guard<std::mutex> l(mu_);
    auto r = [&]() -> base::Result<void> {
        if (overflow_) {
            if (::syncfs(root) != 0) return base::sys_error("syncfs target");
            return base::Ok();
        }
        for (auto& f : fds_)
            if (::fsync(f.get()) != 0) return base::sys_error("fsync staged entry");
        bool whole = false;  // an entry the user may not open (mode 000): syncfs covers it
        for (const auto& rel : nodes_) {
            auto [parent, name] = split_parent(rel);
            TRY(int pfd, dirs.get(parent));
            int fd = ::openat(pfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0) {
                if (errno == ELOOP) continue;  // a symlink: its directory's fsync covers it
                if (errno == EACCES) {
                    whole = true;
                    continue;
                }
                return base::sys_error("open " + base::display_path(rel) + " to sync it");
            }
            base::Fd f(fd);
            if (::fsync(fd) != 0 && errno != EINVAL) return base::sys_error("fsync " + base::display_path(rel));
        }
        for (const auto& rel : dirs_) {
            auto fd = dirs.get(rel);
            if (!fd.ok() && fd.error().code == EACCES) {
                whole = true;
                continue;
            }
            if (!fd.ok()) return fd.error();
            if (::fsync(*fd) != 0) return base::sys_error("fsync directory " + base::display_path(rel));
        }
        if (whole && ::syncfs(root) != 0) return base::sys_error("syncfs target");
        return base::Ok();
    }();
    fds_.clear();
    dirs_.clear();
    nodes_.clear();
    overflow_ = false;
    return r;
}

EarlyFlush::EarlyFlush(int root, const Durability& dur) {
    int fd = ::openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;  // advisory: without it the final syncfs does it all
    fd_ = base::Fd(fd);
    try {
        t_ = std::thread([this, &dur] {
            std::unique_lock<std::mutex> l(mu_);
            while (!cv_.wait_for(l, std::chrono::milliseconds(kPeriodMs), [this] { return stop_; })) {
                if (!dur.whole_fs()) continue;  // small so far: per-entry fsyncs will do
                l.unlock();
                (void)::syncfs(fd_.get());
                l.lock();
            }
        });
    } catch (const std::system_error&) {
        // No thread: the final syncfs does it all.
    }
}

void EarlyFlush::stop() {
    {
        std::lock_guard<std::mutex> l(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (t_.joinable()) t_.join();
}

}  // namespace review
