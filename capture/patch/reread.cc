// The second pass over a validated patch (Patch::read_data, read_file).
// Validation recorded where each file's stored data lies in the decoded
// stream; this pass decodes it again, starting at the nearest frame before
// it and skipping what lies between, without parsing tar headers (a file
// nobody asked for is not read at all). Every byte is fingerprinted again
// and must match the patch's sums, so a patch file changed after
// validation is refused, and reading from the wrong place could only fail.
// Small files whose data validation kept (Limits::keep_decoded) are given
// from memory: those bytes are the ones fingerprinted.
#include <algorithm>
#include <cstdint>

#include "capture/patch/reader.h"
#include "capture/patch/reader_impl.h"
#include "capture/patch/zstream.h"
#include "capture/scan/entry/fingerprint.h"
#include "helper/base/text.h"

namespace capture {

using base::Result;

namespace {

// Reads the decoded stream forward from a restart point.
class Cursor {
public:
    Cursor(int fd, const std::vector<ZstdReader::Mark>& marks, std::string file)
        : fd_(fd), marks_(marks), file_(std::move(file)) {}

    // Positions at decoded offset want: reading on when that is near,
    // restarting at the last frame before it when that is closer.
    Result<void> seek(uint64_t want) {
        const ZstdReader::Mark* best = nullptr;
        for (const auto& m : marks_) {  // few: one per MiB decoded
            if (m.decoded > want) break;
            best = &m;
        }
        bool ahead = z_ && pos_ <= want;
        if (!ahead || (best && best->decoded > pos_ + kReadOnMax)) {
            if (!best) return changed("no frame starts before the data");
            z_ = std::make_unique<ZstdReader>(fd_, -1, best->file);
            pos_ = best->decoded;
            p_ = nullptr;
            n_ = 0;
        }
        while (pos_ < want) {
            TRY_VOID(fill());
            size_t k = static_cast<size_t>(std::min<uint64_t>(n_, want - pos_));
            take(k);
        }
        return base::Ok();
    }

    // The next n bytes, to f in pieces.
    template <class F>
    Result<void> read(uint64_t n, const F& f) {
        while (n > 0) {
            TRY_VOID(fill());
            size_t k = static_cast<size_t>(std::min<uint64_t>(n_, n));
            TRY_VOID(f(p_, k));
            take(k);
            n -= k;
        }
        return base::Ok();
    }

    base::Error changed(const std::string& why) const {
        return base::error("patch " + file_ + " changed since it was validated (" + why + ")");
    }

private:
    // Skipping up to this much is cheaper than starting a new reader.
    static constexpr uint64_t kReadOnMax = uint64_t{4} << 20;

    Result<void> fill() {
        if (n_ > 0) return base::Ok();
        auto r = z_->next();
        if (!r) return changed(r.error().message);
        if (r->second == 0) return changed("it ends early");
        p_ = r->first;
        n_ = r->second;
        return base::Ok();
    }
    void take(size_t k) {
        p_ += k;
        n_ -= k;
        pos_ += k;
    }

    int fd_;
    const std::vector<ZstdReader::Mark>& marks_;
    std::string file_;
    std::unique_ptr<ZstdReader> z_;
    uint64_t pos_ = 0;
    const char* p_ = nullptr;
    size_t n_ = 0;
};

}  // namespace

Result<void> Patch::read_data(const std::function<DataSink(const Member&)>& visit) const {
    Cursor cur(impl_->fd.get(), impl_->marks, impl_->file);
    for (size_t i = 0; i < impl_->members.size(); i++) {
        const Member& m = impl_->members[i];
        if (m.kind != Member::Kind::File) continue;
        DataSink sink = visit(m);
        const StoredData& at = impl_->stored[i];
        if (!sink || at.bytes == 0) continue;  // nothing to read: nothing to check either
        // Kept in memory by validation: the bytes it fingerprinted.
        if (at.kept >= 0) {
            const char* p = impl_->kept.at(at.kept);
            for (uint64_t o = 0; o < m.size; o += KeptData::kMemberMax)
                TRY_VOID(sink(o, p + o, static_cast<size_t>(std::min<uint64_t>(KeptData::kMemberMax, m.size - o))));
            continue;
        }
        TRY_VOID(cur.seek(at.offset));
        Fingerprint fp;
        std::vector<std::pair<uint64_t, uint64_t>> dense{{0, m.size}};
        for (const auto& [off, len] : m.sparse.empty() ? dense : m.sparse) {
            uint64_t o = off;
            auto piece = [&](const char* p, size_t n) -> Result<void> {
                fp.data(o, p, n);
                auto r = sink(o, p, n);
                o += n;
                return r;
            };
            TRY_VOID(cur.read(len, piece));
        }
        if (fp.finish(m.size) != impl_->sums[at.sum].second)
            return cur.changed("member " + base::display_path(m.path) + " differs");
    }
    return base::Ok();
}

bool Patch::kept(const Member& m) const {
    const auto& ms = impl_->members;
    auto at = reinterpret_cast<uintptr_t>(&m), begin = reinterpret_cast<uintptr_t>(ms.data());
    if (at < begin || at >= begin + ms.size() * sizeof(Member)) return false;  // not one of this patch's
    return impl_->stored[(at - begin) / sizeof(Member)].kept >= 0;
}

const std::string& Patch::member_fingerprint(size_t i) const { return impl_->sums[impl_->stored[i].sum].second; }

Result<std::string> Patch::read_file(const std::string& path, uint64_t limit) const {
    const Member* want = nullptr;
    for (const auto& m : impl_->members)
        if (m.path == path) want = &m;
    if (want && want->kind == Member::Kind::Hardlink) {
        std::string target = want->link_target;
        want = nullptr;
        for (const auto& m : impl_->members)
            if (m.path == target && m.kind == Member::Kind::File) want = &m;
    }
    if (!want || want->kind != Member::Kind::File)
        return base::error(base::display_path(path) + " is not a file in patch " + impl_->file);
    if (want->size > limit)
        return base::error(base::display_path(path) + " is larger than " + std::to_string(limit) + " bytes");
    std::string out(static_cast<size_t>(want->size), '\0');
    TRY_VOID(read_data([&](const Member& m) -> DataSink {
        if (&m != want) return nullptr;
        return [&](uint64_t off, const char* p, size_t n) -> Result<void> {
            std::copy(p, p + n, out.data() + off);
            return base::Ok();
        };
    }));
    return out;
}

}  // namespace capture
