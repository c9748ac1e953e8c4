#include "helper/cli/patch_contents.h"

#include <cstdio>
#include <map>
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

}  // namespace

base::Result<void> print_patch_contents(const capture::Patch& p) {
    using Kind = capture::Member::Kind;
    std::set<std::string> linked;  // file members a hard link member repeats
    for (const auto& m : p.members())
        if (m.kind == Kind::Hardlink) linked.insert(m.link_target);
    std::map<std::string, std::string> kept;  // their bytes, for the links after them
    bool first = true;
    auto open_entry = [&](const std::string& path) {
        std::string s = first ? "{\"files\":[" : ",";
        first = false;
        s += "{\"path_b64\":\"" + base::base64_encode(path) + "\",\"data_b64\":\"";
        return put(s);
    };
    Base64Out out;
    const capture::Member* current = nullptr;
    uint64_t written = 0;  // bytes of the current file so far
    std::string* keep = nullptr;
    auto close_entry = [&]() -> base::Result<void> {
        if (!current) return base::Ok();
        TRY_VOID(out.zeros(current->size - written));  // a hole at the end
        if (keep) keep->resize(static_cast<size_t>(current->size), '\0');
        TRY_VOID(out.finish());
        current = nullptr;
        return put("\"}");
    };
    // Members in archive order: each file's data comes in offset order, the
    // holes of a sparse file written as zeros.
    base::Result<void> failed = base::Ok();
    auto member = [&](const capture::Member& m) -> capture::DataSink {
        if (auto f = close_entry(); !f) failed = f;
        if (auto f = open_entry(m.path); !f) failed = f;
        current = &m;
        written = 0;
        keep = linked.count(m.path) ? &kept[m.path] : nullptr;
        return [&](uint64_t off, const char* b, size_t n) -> base::Result<void> {
            if (off < written)
                return base::error(m.path + ": the reader gave its data out of order (a bug; please report it)");
            TRY_VOID(out.zeros(off - written));
            TRY_VOID(out.feed(std::string_view(b, n)));
            if (keep) {
                keep->resize(static_cast<size_t>(off), '\0');
                keep->append(b, n);
            }
            written = off + n;
            return base::Ok();
        };
    };
    TRY_VOID(p.read_data(member));
    TRY_VOID(failed);
    TRY_VOID(close_entry());
    for (const auto& m : p.members()) {
        if (m.kind != Kind::Hardlink) continue;
        auto it = kept.find(m.link_target);
        if (it == kept.end()) continue;
        TRY_VOID(open_entry(m.path));
        TRY_VOID(put(base::base64_encode(it->second)));
        TRY_VOID(put("\"}"));
    }
    TRY_VOID(put(first ? "{\"files\":[]}\n" : "]}\n"));
    // The tail still in stdio's buffer: a full disk (or /dev/full) fails
    // only here, and must not end a cut-off JSON with exit 0.
    if (std::fflush(stdout) != 0) return write_failed();
    return base::Ok();
}
