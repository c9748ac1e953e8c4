#include "review/diff/trim.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

namespace review {

namespace {

constexpr size_t kStep = 64 << 10;  // the window's edges are searched this much at a time
constexpr uint64_t kBinaryHead = 8000;

}  // namespace

Trim::Trim(int old_fd, uint64_t old_size, uint64_t new_size) : fd_(old_fd), old_size_(old_size), new_size_(new_size) {}

base::Result<size_t> Trim::pread_some(char* buf, size_t len, uint64_t off) const {
    size_t got = 0;
    while (got < len) {
        ssize_t n = ::pread(fd_, buf + got, len - got, static_cast<off_t>(off + got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return base::sys_error("reading the real file");
        if (n == 0) break;  // shrank meanwhile: the rest compares as different
        got += static_cast<size_t>(n);
    }
    return got;
}

base::Result<void> Trim::feed(uint64_t off, const char* data, size_t len) {
    if (sparse_ || len == 0) return base::Ok();
    if (off != pos_) {
        sparse_ = true;
        return base::Ok();
    }
    pos_ += len;
    if (off < kBinaryHead && std::memchr(data, '\0', std::min<uint64_t>(len, kBinaryHead - off))) new_binary_ = true;
    std::unique_ptr<char[]> buf(new char[len]);
    bool same_sizes = old_size_ == new_size_;  // both alignments read the same bytes: once
    size_t have = 0;
    if (prefix_open_) {
        size_t want = off < old_size_ ? static_cast<size_t>(std::min<uint64_t>(len, old_size_ - off)) : 0;
        TRY(size_t got, pread_some(buf.get(), want, off));
        have = got;
        size_t same = 0;
        while (same < got && buf[same] == data[same]) same++;
        prefix_lines_ += static_cast<uint64_t>(std::count(data, data + same, '\n'));
        if (same < len) {
            prefix_open_ = false;
            prefix_ = off + same;
        }
    }
    // End-aligned: new offset o faces old offset o + (old_size - new_size).
    int64_t shift = static_cast<int64_t>(old_size_) - static_cast<int64_t>(new_size_);
    int64_t first = static_cast<int64_t>(off) + shift;  // old offset facing data[0]
    size_t skip = first < 0 ? static_cast<size_t>(std::min<int64_t>(-first, static_cast<int64_t>(len))) : 0;
    if (skip > 0) diff_end_ = off + skip;  // bytes facing nothing differ
    if (skip < len) {
        size_t got = have;
        if (!(same_sizes && have == len)) {
            TRY(got, pread_some(buf.get(), len - skip, static_cast<uint64_t>(first) + skip));
        }
        size_t last = len;  // one past the last differing byte, scanning from the end
        if (got < len - skip) {
            last = len;
        } else {
            while (last > skip && buf[last - 1 - skip] == data[last - 1]) last--;
        }
        if (last > skip) diff_end_ = off + last;
    }
    return base::Ok();
}

base::Result<std::optional<TrimWindow>> Trim::finish(int context, uint64_t cap) {
    if (sparse_ || pos_ != new_size_) return std::optional<TrimWindow>();
    TrimWindow w;
    uint64_t common = std::min(old_size_, new_size_);
    uint64_t prefix = prefix_open_ ? common : std::min(prefix_, common);
    if (prefix_open_ && old_size_ == new_size_) {
        w.identical = true;
        return std::optional<TrimWindow>(w);
    }
    uint64_t suffix = std::min(new_size_ - diff_end_, common - prefix);
    uint64_t old_mid_end = old_size_ - suffix;
    const uint64_t want = static_cast<uint64_t>(std::max(context, 0)) + 1;
    std::string buf;

    // Back from the prefix's end to the start of its line, then `context` lines more.
    uint64_t start = prefix, found = 0, lines_between = 0;
    while (start > 0 && found < want) {
        uint64_t from = start > kStep ? start - kStep : 0;
        buf.resize(static_cast<size_t>(start - from));
        TRY(size_t got, pread_some(buf.data(), buf.size(), from));
        if (got < buf.size()) return std::optional<TrimWindow>();
        size_t i = buf.size();
        while (i > 0 && found < want) {
            if (buf[i - 1] == '\n' && ++found == want) break;
            i--;
        }
        if (found == want) {
            start = from + i;  // just after that newline
        } else {
            start = from;
        }
        if (prefix - start > cap) return std::optional<TrimWindow>();
    }
    // Newlines in [start, prefix) were counted as prefix lines.
    {
        uint64_t at = start;
        while (at < prefix) {
            size_t n = static_cast<size_t>(std::min<uint64_t>(kStep, prefix - at));
            buf.resize(n);
            TRY(size_t got, pread_some(buf.data(), n, at));
            lines_between += static_cast<uint64_t>(std::count(buf.data(), buf.data() + got, '\n'));
            if (got < n) break;
            at += n;
        }
    }
    // Forward from the suffix's start to the end of its line, then `context` lines more.
    uint64_t end = old_mid_end;
    found = 0;
    while (end < old_size_ && found < want) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(kStep, old_size_ - end));
        buf.resize(n);
        TRY(size_t got, pread_some(buf.data(), n, end));
        if (got < n) return std::optional<TrimWindow>();
        size_t i = 0;
        for (; i < n; i++)
            if (buf[i] == '\n' && ++found == want) break;
        end += found == want ? i + 1 : n;
        if (end - old_mid_end > cap) return std::optional<TrimWindow>();
    }
    w.start = start;
    w.old_end = end;
    w.new_end = end - (old_size_ - new_size_);  // the same distance before the end, in the common suffix
    w.first_line = prefix_lines_ - lines_between;
    if (w.old_end - w.start > cap || w.new_end - w.start > cap) return std::optional<TrimWindow>();
    char head[kBinaryHead];
    TRY(size_t got, pread_some(head, static_cast<size_t>(std::min<uint64_t>(kBinaryHead, old_size_)), 0));
    w.binary = new_binary_ || std::memchr(head, '\0', got) != nullptr;
    return std::optional<TrimWindow>(w);
}

}  // namespace review
