#include "helper/cli/patch/patch_contents.h"

#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "helper/base/text.h"

namespace {

base::Error write_failed() { return base::error("writing the contents to stdout failed (a closed pipe?)"); }

base::Result<void> put(std::string_view s) {
    if (std::fwrite(s.data(), 1, s.size(), stdout) != s.size()) return write_failed();
    return base::Ok();
}

// One file's bytes as base64, written as they come: at most two bytes
// wait for the next chunk, so a 1 GiB file never sits in memory.
class Base64Out {
public:
    base::Result<void> feed(std::string_view b) {
        if (!carry_.empty()) {
            while (carry_.size() < 3 && !b.empty()) {
                carry_ += b.front();
                b.remove_prefix(1);
            }
            if (carry_.size() < 3) return base::Ok();
            TRY_VOID(put(base::base64_encode(carry_)));
            carry_.clear();
        }
        size_t whole = b.size() / 3 * 3;
        for (size_t i = 0; i < whole; i += kStep)
            TRY_VOID(put(base::base64_encode(b.substr(i, std::min(kStep, whole - i)))));
        carry_.assign(b.substr(whole));
        return base::Ok();
    }
    base::Result<void> zeros(uint64_t n) {
        static const std::string z(kStep, '\0');
        for (; n > 0; n -= std::min<uint64_t>(n, z.size()))
            TRY_VOID(feed(std::string_view(z).substr(0, std::min<uint64_t>(n, z.size()))));
        return base::Ok();
    }
    base::Result<void> finish() {
        TRY_VOID(put(base::base64_encode(carry_)));
        carry_.clear();
        return base::Ok();
    }

private:
    static constexpr size_t kStep = 3 << 16;  // a multiple of 3
    std::string carry_;
};

// The bytes of one file member as the reader hands them out: in offset
// order, the holes of a sparse file (and its end) written as zeros.
class FileOut {
public:
    explicit FileOut(const capture::Member& m) : m_(m) {}
    base::Result<void> data(uint64_t off, const char* b, size_t n) {
        if (off < written_)
            return base::error(m_.path + ": the reader gave its data out of order (a bug; please report it)");
        TRY_VOID(out_.zeros(off - written_));
        TRY_VOID(out_.feed(std::string_view(b, n)));
        written_ = off + n;
        return base::Ok();
    }
    base::Result<void> finish() {
        TRY_VOID(out_.zeros(m_.size - written_));  // a hole at the end
        return out_.finish();
    }

private:
    const capture::Member& m_;
    Base64Out out_;
    uint64_t written_ = 0;
};

}  // namespace

base::Result<void> print_patch_contents(const capture::Patch& p) {
    using Kind = capture::Member::Kind;
    bool first = true;
    auto open_entry = [&](const std::string& path) {
        std::string s = first ? "{\"files\":[" : ",";
        first = false;
        s += "{\"path_b64\":\"" + base::base64_encode(path) + "\",\"data_b64\":\"";
        return put(s);
    };
    std::set<std::string> linked;  // file members a hard link member repeats
    for (const auto& m : p.members())
        if (m.kind == Kind::Hardlink) linked.insert(m.link_target);
    // Their bytes, kept for the links while they fit in kKeepMax (together):
    // a bigger one is read again from the patch for each link (a linked
    // sparse file of 1 TiB holds almost nothing in the patch).
    constexpr uint64_t kKeepMax = uint64_t{32} << 20;
    uint64_t keep_left = kKeepMax;
    std::map<std::string, std::string> kept;
    std::string* keep = nullptr;
    const capture::Member* current = nullptr;
    std::optional<FileOut> out;
    auto close_entry = [&]() -> base::Result<void> {
        if (!current) return base::Ok();
        TRY_VOID(out->finish());
        if (keep) keep->resize(static_cast<size_t>(current->size), '\0');
        current = nullptr;
        return put("\"}");
    };
    // Members in archive order, each file's data as it comes.
    base::Result<void> failed = base::Ok();
    auto member = [&](const capture::Member& m) -> capture::DataSink {
        if (auto f = close_entry(); !f) failed = f;
        if (auto f = open_entry(m.path); !f) failed = f;
        current = &m;
        out.emplace(m);
        keep = nullptr;
        if (linked.count(m.path) && m.size <= keep_left) {
            keep_left -= m.size;
            keep = &kept[m.path];
        }
        return [&](uint64_t off, const char* b, size_t n) -> base::Result<void> {
            TRY_VOID(out->data(off, b, n));  // in order: off is past what came
            if (keep) {
                keep->resize(static_cast<size_t>(off), '\0');
                keep->append(b, n);
            }
            return base::Ok();
        };
    };
    TRY_VOID(p.read_data(member));
    TRY_VOID(failed);
    TRY_VOID(close_entry());
    std::map<std::string, const capture::Member*> files;
    for (const auto& m : p.members())
        if (m.kind == Kind::File) files.emplace(m.path, &m);
    for (const auto& m : p.members()) {
        if (m.kind != Kind::Hardlink) continue;
        auto it = files.find(m.link_target);
        if (it == files.end()) continue;
        const capture::Member* target = it->second;
        TRY_VOID(open_entry(m.path));
        FileOut link(*target);
        if (auto k = kept.find(target->path); k != kept.end()) {
            TRY_VOID(link.data(0, k->second.data(), k->second.size()));
        } else {
            TRY_VOID(p.read_data([&](const capture::Member& x) -> capture::DataSink {
                if (&x != target) return nullptr;
                return [&](uint64_t off, const char* b, size_t n) { return link.data(off, b, n); };
            }));
        }
        TRY_VOID(link.finish());
        TRY_VOID(put("\"}"));
    }
    TRY_VOID(put(first ? "{\"files\":[]}\n" : "]}\n"));
    // The tail still in stdio's buffer: a full disk (or /dev/full) fails
    // only here, and must not end a cut-off JSON with exit 0.
    if (std::fflush(stdout) != 0) return write_failed();
    return base::Ok();
}
