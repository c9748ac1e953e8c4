// write_patch: the manifest, the members and the sums, through zstd frames.
// The members of a patch of more than one chunk are made by threads, each
// a chunk at a time (capture/patch/chunk_pipe.h), and compressed by them
// too; the calling thread writes the frames out in order: the same bytes as
// one thread writing them all, with the reads, fingerprints, secret checks,
// headers and compression spread over the CPUs (docs/performance.md, "Save,
// round 5" and "Save, round 10").
#include "capture/patch/writer.h"

#include <unistd.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <unordered_map>

#include "capture/patch/chunk_pipe.h"
#include "capture/patch/manifest.h"
#include "capture/patch/reader.h"
#include "capture/patch/tar_members.h"
#include "capture/patch/zstream.h"
#include "helper/base/text.h"
#include "helper/base/thread.h"

namespace capture {

using base::Result;

namespace {

// A chunk: members of about this many bytes of tar (a bigger file is a
// chunk of its own, streamed). Small enough that the chunks of 10,000 small
// files spread evenly over the threads.
constexpr uint64_t kChunkBytes = uint64_t{256} << 10;
constexpr uint64_t kHeaderGuess = 1024;  // a member's headers, as a guess
// The pieces a chunk is handed over in, and how much of a chunk may wait
// untaken (its maker then waits): memory is a few MiB whatever the patch.
constexpr size_t kPieceBytes = size_t{256} << 10;
constexpr size_t kChunkCap = size_t{1} << 20;

class FrameSink : public TarSink {
public:
    explicit FrameSink(ZstdWriter& zw) : zw_(zw) {}
    Result<void> write(const void* p, size_t n) override { return zw_.write(p, n); }
    Result<void> group(size_t bytes, bool fast) override { return zw_.group(bytes, fast); }

private:
    ZstdWriter& zw_;
};

// A chunk maker's output: its bytes in pieces, with the group marks among
// them; or, for a chunk the maker compresses itself, its frames.
class PieceSink : public TarSink {
public:
    explicit PieceSink(ChunkPipe& pipe) : pipe_(pipe) {}
    ~PieceSink() override { pipe_.recycle(std::move(cur_)); }
    size_t chunk = 0;
    bool frames = false;  // the bytes are compressed frames
    uint64_t raw = 0;     // the tar in them, not yet handed over
    Result<void> write(const void* p, size_t n) override {
        const char* c = static_cast<const char*>(p);
        while (n > 0) {
            if (!cur_.p) fresh();
            size_t m = std::min(n, cur_.cap - cur_.size);
            std::copy(c, c + m, cur_.p.get() + cur_.size);
            cur_.size += m;
            c += m;
            n -= m;
            if (cur_.size == cur_.cap) TRY_VOID(flush());
        }
        return base::Ok();
    }
    Result<void> group(size_t bytes, bool fast) override {
        if (!cur_.p) fresh();
        cur_.marks.push_back({cur_.size, bytes, fast});
        return base::Ok();
    }
    Result<void> flush() {
        if (raw > 0 && !cur_.p) fresh();  // the last frame's tar, counted after it was handed over
        if (!cur_.p || (cur_.size == 0 && cur_.marks.empty() && raw == 0)) return base::Ok();
        cur_.raw = raw;
        raw = 0;
        if (!pipe_.put(chunk, &cur_)) return base::error("stopped");
        return base::Ok();
    }

private:
    void fresh() {
        cur_ = pipe_.buffer(kPieceBytes);
        cur_.frames = frames;
    }
    ChunkPipe& pipe_;
    ChunkPipe::Piece cur_;
};

// What a maker's members go to: its pieces as tar, or (most chunks) its own
// zstd frames, cut where the calling thread's writer would cut them: the
// calling thread then only writes them out, with no copy into its frames
// and no hand-over to its zstd workers (docs/performance.md, "Save, round
// 10"). A chunk of a big file stays tar: its frames are compressed by the
// writer's workers side by side, where one maker would compress them alone.
class MakerSink : public TarSink {
public:
    explicit MakerSink(ChunkPipe& pipe)
        : pieces(pipe), zw_([this](const char* p, size_t n) { return pieces.write(p, n); }) {}
    PieceSink pieces;
    Result<void> write(const void* p, size_t n) override {
        if (!pieces.frames) return pieces.write(p, n);
        pieces.raw += n;
        return zw_.write(p, n);
    }
    Result<void> group(size_t bytes, bool fast) override {
        return pieces.frames ? zw_.group(bytes, fast) : pieces.group(bytes, fast);
    }
    void start(size_t k, bool compress) {
        pieces.chunk = k;
        pieces.frames = compress;
    }
    Result<void> end() {
        if (pieces.frames) TRY_VOID(zw_.cut());
        return pieces.flush();
    }

private:
    ZstdWriter zw_;
};

// For each item, the earlier member it is a hard link of (the first file of
// its inode), or null.
std::vector<const std::string*> hard_links(const std::vector<Item>& items) {
    std::vector<const std::string*> out(items.size(), nullptr);
    std::unordered_map<uint64_t, const std::string*> first;
    for (size_t i = 0; i < items.size(); i++) {
        const Item& it = items[i];
        if (!it.change.captured || it.whiteout || it.change.type != Type::File || it.nlink <= 1) continue;
        auto [pos, fresh] = first.emplace(it.ino, &it.change.path);
        if (!fresh) out[i] = pos->second;
    }
    return out;
}

// Where each chunk starts (item indices).
std::vector<size_t> cut_chunks(const std::vector<Item>& items) {
    std::vector<size_t> starts;
    uint64_t in_chunk = kChunkBytes;
    for (size_t i = 0; i < items.size(); i++) {
        if (in_chunk >= kChunkBytes) {
            starts.push_back(i);
            in_chunk = 0;
        }
        const Change& c = items[i].change;
        in_chunk += kHeaderGuess + (c.type == Type::File && !items[i].whiteout ? c.size : 0);
    }
    return starts;
}

// Whether a chunk's maker compresses it itself: not a chunk of this many
// bytes of tar or more (a big file).
constexpr uint64_t kMakerFrames = uint64_t{4} << 20;
bool maker_compresses(const std::vector<Item>& items, size_t begin, size_t end) {
    uint64_t bytes = 0;
    for (size_t i = begin; i < end; i++) {
        const Change& c = items[i].change;
        bytes += kHeaderGuess + (c.type == Type::File && !items[i].whiteout ? c.size : 0);
    }
    return bytes < kMakerFrames;
}

size_t maker_count(const WriteOptions& opts, size_t chunks) {
    if (chunks < 2) return 0;
    if (opts.threads >= 0) return std::min(static_cast<size_t>(opts.threads), chunks);
    long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 1 ? static_cast<size_t>(std::min(cpus, 4L)) : 0;
}

// The members in chunks made by `makers` threads, fed to zw in order; their
// sums and notes appended to main's. `first` writes what comes before them
// (the manifest), while the threads make their first chunks. *none: no
// thread could be made, and nothing was done (`first` not called).
Result<void> in_chunks(ZstdWriter& zw, TarMembers& main, const std::vector<Item>& items,
                       const std::vector<const std::string*>& links, const std::vector<size_t>& starts, size_t makers,
                       const std::vector<int>& layer_fds, const WriteOptions& opts,
                       const std::function<Result<void>()>& first, bool* none) {
    size_t n = starts.size();
    ChunkPipe pipe(n, makers * 4, kChunkCap);
    struct Made {
        std::vector<std::pair<std::string, std::string>> sums;
        std::string notes;
        base::Error error;
    };
    std::vector<Made> made(n);
    auto make = [&] {
        TarMembers tm(layer_fds, opts, nullptr);
        MakerSink sink(pipe);
        auto opened = tm.open(&sink);
        size_t k;
        while (pipe.claim(&k)) {
            Result<void> r = opened;
            size_t end = k + 1 < n ? starts[k + 1] : items.size();
            sink.start(k, maker_compresses(items, starts[k], end));
            for (size_t i = starts[k]; r && i < end; i++) r = tm.item(items[i], links[i]);
            if (r) r = tm.end_member();
            if (r) r = sink.end();
            made[k].sums = std::move(tm.sums());
            made[k].notes = std::move(tm.notes());
            tm.sums().clear();
            tm.notes().clear();
            if (!r) made[k].error = r.error();
            pipe.done(k);
            if (!r) return;  // the archive may be unusable; the taker stops at this chunk
        }
    };
    std::vector<std::unique_ptr<base::StackThread>> threads;
    for (size_t i = 0; i < makers; i++) {
        auto t = std::make_unique<base::StackThread>();
        if (!t->start(make, size_t{1} << 20)) break;
        threads.push_back(std::move(t));
    }
    *none = threads.empty();
    Result<void> r = base::Ok();
    if (!*none) r = first();
    for (size_t k = 0; r && !*none && k < n; k++) {
        ChunkPipe::Piece p;
        r = zw.cut();
        while (r && pipe.take(k, &p)) {
            if (p.frames) {
                r = zw.write_frames(p.p.get(), p.size, p.raw);
                if (!r) r = r.error().context("writing the patch");
                pipe.recycle(std::move(p));
                continue;
            }
            size_t at = 0;
            for (const auto& mark : p.marks) {
                if (r && mark.at > at) r = zw.write(p.p.get() + at, mark.at - at);
                if (r) r = zw.group(mark.bytes, mark.fast);
                at = mark.at;
            }
            if (r && p.size > at) r = zw.write(p.p.get() + at, p.size - at);
            if (!r) r = r.error().context("writing the patch");
            pipe.recycle(std::move(p));
        }
        if (!r) break;
        // Taken whole: its maker is done with it.
        if (!made[k].error.message.empty()) r = made[k].error;
        auto& sums = main.sums();
        sums.insert(sums.end(), std::make_move_iterator(made[k].sums.begin()),
                    std::make_move_iterator(made[k].sums.end()));
        main.notes() += made[k].notes;
        made[k] = Made();
    }
    pipe.stop();
    threads.clear();  // joined
    return r;
}

Result<void> write_all_members(int out_fd, const Manifest& m, const std::vector<Item>& items,
                               const std::vector<int>& layer_fds, const WriteOptions& opts, const OpenFile* open_file) {
    ZstdWriter zw(out_fd);
    if (opts.durable) zw.flush_as_written();
    FrameSink frames(zw);
    TarMembers main(layer_fds, opts, open_file);
    TRY_VOID(main.open(&frames));
    // The manifest, first in the stream; with threads, made and written
    // while they make their first chunks (~35 ms of one thread for 10,000
    // changes: docs/performance.md, "Save, round 6").
    auto manifest = [&]() -> Result<void> {
        TRY_VOID(main.blob(kManifestName, manifest_to_text(m)));
        return main.end_member();
    };
    auto links = hard_links(items);
    auto starts = cut_chunks(items);
    size_t makers = open_file ? 0 : maker_count(opts, starts.size());
    bool serial = makers == 0;
    if (!serial) TRY_VOID(in_chunks(zw, main, items, links, starts, makers, layer_fds, opts, manifest, &serial));
    if (serial) {
        TRY_VOID(manifest());
        // Frames cut at each chunk's start, after the member before it (its
        // padding), as with threads: the same patch.
        for (size_t k = 0, i = 0; i < items.size(); i++) {
            if (k < starts.size() && starts[k] == i) {
                TRY_VOID(main.end_member());
                TRY_VOID(zw.cut());
                k++;
            }
            TRY_VOID(main.item(items[i], links[i]));
        }
    }
    if (opts.notes) *opts.notes += main.notes();
    // The sums start a frame of their own: the last chunk's frames end there.
    TRY_VOID(main.end_member());
    TRY_VOID(zw.cut());
    TRY_VOID(main.close());
    return zw.finish();
}

}  // namespace

Result<void> write_patch(int out_fd, const Manifest& m, const std::vector<Item>& items, int upper_fd,
                         const WriteOptions& opts) {
    return write_patch(out_fd, m, items, std::vector<int>{upper_fd}, opts);
}

// What would make the patch unreadable (docs/patch-format.md), refused
// before writing: a change named as one of the format's own members, or a
// path its reader refuses as too long (the kernel lets a tree nest without
// end; a whiteout or an opaque dir's marker adds up to 13 bytes to it).
static Result<void> check_storable(const Manifest& m) {
    const uint64_t max = Limits{}.max_name_len;
    for (const auto& c : m.changes) {
        for (const char* reserved : {kManifestName, kSumsName, kOriginalsName, kOriginalName})
            if (c.path == reserved)
                return base::error(std::string("the session holds ") + reserved +
                                   ", a name the patch format reserves for itself; leave it out with --ignore " +
                                   reserved);
        if (too_long_for_a_patch(c.path.size())) {
            std::string top = c.path.substr(0, c.path.find('/'));
            std::string shown = base::display_path(c.path.substr(0, 120));
            return base::error("the session holds a path of " + std::to_string(c.path.size()) + " bytes (" + shown +
                               "...), longer than a patch holds (" + std::to_string(max) +
                               " bytes); leave it out with --ignore " + base::display_path(top));
        }
    }
    return base::Ok();
}

Result<void> write_patch(int out_fd, const Manifest& m, const std::vector<Item>& items,
                         const std::vector<int>& layer_fds, const WriteOptions& opts) {
    TRY_VOID(check_storable(m));
    return write_all_members(out_fd, m, items, layer_fds, opts, nullptr);
}

Result<void> write_patch(int out_fd, const Manifest& m, const std::vector<Item>& items, const OpenFile& open_file,
                         const WriteOptions& opts) {
    TRY_VOID(check_storable(m));
    return write_all_members(out_fd, m, items, std::vector<int>{}, opts, &open_file);
}

}  // namespace capture
