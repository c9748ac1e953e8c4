// Tar bytes made by several threads and taken in order by one: the patch
// writer cuts its members into chunks (runs of whole members), worker
// threads each make one chunk at a time (reads, fingerprints, headers), and
// the caller takes the chunks' bytes in chunk order into the zstd frames, so
// the stream is the one a single thread would write. Memory stays bounded:
// a chunk holds at most cap bytes not yet taken (its maker waits), and no
// chunk more than `window` ahead of the one being taken is started.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace capture {

class ChunkPipe {
public:
    // A group mark: the `bytes` after offset `at` of the piece belong
    // together (ZstdWriter::group(bytes, fast) is called there).
    struct Mark {
        size_t at = 0, bytes = 0;
        bool fast = false;
    };
    // Bytes of one chunk and the marks among them. A piece is handed over
    // when full (or at its chunk's end), not at each mark: one hand-over
    // (and one wake-up of the taker) per original made the taker wait
    // ~4,000 times in a 10,000-file save (docs/performance.md, "Save,
    // round 9").
    struct Piece {
        std::unique_ptr<char[]> p;
        size_t size = 0, cap = 0;
        std::vector<Mark> marks;
        // Compressed frames (ZstdWriter::write_frames), not tar; `raw`:
        // the bytes of tar they hold (counted where the chunk ends).
        bool frames = false;
        uint64_t raw = 0;
    };

    ChunkPipe(size_t chunks, size_t window, size_t cap);

    // Makers. The next chunk to make, in order; false when none is left or
    // the pipe stopped. Waits while that chunk is `window` or more ahead of
    // the one being taken.
    bool claim(size_t* k);
    // Hands a piece of chunk k over (waits while the chunk already holds cap
    // bytes not taken); false when the pipe stopped. `piece` comes back empty.
    bool put(size_t k, Piece* piece);
    // Chunk k is complete (or stopped short: the maker keeps why).
    void done(size_t k);
    // A buffer of at least cap bytes (recycled when one is free).
    Piece buffer(size_t cap);

    // The taker. The next piece of chunk k (which must be taken in order),
    // waiting for it; false at the chunk's end.
    bool take(size_t k, Piece* piece);
    void recycle(Piece piece);
    // Makers stop at their next call; nothing more is handed over.
    void stop();

private:
    struct Chunk {
        std::deque<Piece> q;
        size_t pending = 0;
        bool done = false;
    };
    std::mutex mu_;
    // Makers wait on made_ (for room, or a chunk to start), the taker on
    // taken_: each wake-up reaches only the side that can go on.
    std::condition_variable made_, taken_;
    std::vector<Chunk> chunks_;
    std::vector<Piece> spare_;
    size_t window_, cap_;
    size_t next_ = 0;    // the next chunk to claim
    size_t taking_ = 0;  // the chunk being taken
    bool stop_ = false;
};

}  // namespace capture
