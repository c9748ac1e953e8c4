#include "capture/patch/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <string_view>

#include "capture/patch/agreement.h"
#include "capture/patch/manifest.h"
#include "capture/patch/member_check.h"
#include "capture/patch/reader_impl.h"
#include "capture/patch/tar_in.h"
#include "capture/patch/writer.h"
#include "capture/scan/entry/fingerprint.h"
#include "capture/scan/entry/names.h"
#include "helper/base/fd.h"
#include "helper/base/text.h"
#include "helper/base/thread.h"

namespace capture {

using base::Result;

namespace {

using member_check::lim;
using member_check::shown;
using member_check::Validator;

// size: what the header says (a hint: the data is checked against limit).
Result<std::string> read_small(TarIn& t, uint64_t limit, const std::string& what, int64_t size) {
    std::string out;
    // One allocation instead of doubling: a 10k-file manifest is megabytes,
    // and copying it while it grows touched fresh memory for each copy.
    if (size > 0) out.reserve(static_cast<size_t>(std::min<uint64_t>(static_cast<uint64_t>(size), limit)));
    for (;;) {
        const char* p;
        size_t n;
        int64_t off;
        TRY_VOID(t.block(&p, &n, &off));
        if (n == 0) return out;
        if (static_cast<uint64_t>(off) != out.size()) return base::error(what + " is stored sparse, which is invalid");
        if (out.size() + n > limit) return base::error(what + " is larger than " + lim(limit) + " bytes");
        out.append(p, n);
    }
}

// A file member's data, bounds-checked, fingerprinted and passed on;
// *stored: the bytes it took in the stream.
Result<std::string> stream_data(TarIn& t, const Member& m, Validator* v, const DataSink& sink,
                                uint64_t* stored = nullptr) {
    Fingerprint fp;
    uint64_t next = 0, total = 0;
    for (;;) {
        const char* p;
        size_t n;
        int64_t off;
        TRY_VOID(t.block(&p, &n, &off));
        if (n == 0) break;
        uint64_t o = static_cast<uint64_t>(off);
        if (off < 0 || o < next || o + n > m.size)
            return base::error("member " + base::display_path(m.path) + ": data outside its declared size");
        next = o + n;
        total += n;
        if (v) TRY_VOID(v->add_stored(n));
        fp.data(o, p, n);
        if (sink) TRY_VOID(sink(o, p, n));
    }
    if (stored) *stored = total;
    return fp.finish(m.size);
}

// What a file's stored data must add up to: its size, or its sparse map's segments.
uint64_t expected_stored(const Member& m) {
    if (m.sparse.empty()) return m.size;
    uint64_t sum = 0;
    for (const auto& s : m.sparse) sum += s.second;
    return sum;
}

std::string fp_of_meta(const Member& m) {
    if (m.kind == Member::Kind::Symlink || m.kind == Member::Kind::Hardlink) return fingerprint_bytes(m.link_target);
    return fingerprint_bytes("");
}

}  // namespace

Patch::Patch() : impl_(new Impl) {}
Patch::Patch(Patch&& o) noexcept : impl_(o.impl_) { o.impl_ = nullptr; }
Patch& Patch::operator=(Patch&& o) noexcept {
    if (this != &o) {
        Patch old(std::move(*this));
        impl_ = o.impl_;
        o.impl_ = nullptr;
    }
    return *this;
}
Patch::~Patch() { delete impl_; }

const Manifest& Patch::manifest() const { return impl_->manifest; }
const std::vector<Member>& Patch::members() const { return impl_->members; }
const std::string& Patch::file() const { return impl_->file; }
bool Patch::from_session() const { return impl_->from_session; }

namespace {

struct Parsed {
    Manifest manifest;
    std::vector<Member> members;
    Sums sums;
    std::vector<StoredData> stored;
    std::vector<ZstdReader::Mark> marks;
    KeptData kept;                // small files' decoded data, for the second pass (Limits::keep_decoded)
    std::string originals;        // .layover/originals whole (/2), or the .layover/original members back to back (/3)
    bool have_originals = false;  // a .layover/originals member (/2)
    std::vector<uint64_t> one_sizes;  // the size of each .layover/original member (/3), in order
};

// Originals (layover-patch/2): the member holds exactly the listed contents
// back to back; each must be the content its fingerprint names, and that
// fingerprint the base record of a modified file. Anything else is hostile
// or cut off, and the patch is refused.
// In layover-patch/3 each original is a .layover/original member of its
// own, in list order: the same checks over those members back to back, and
// each member holds exactly its listed original.
Result<void> check_originals(const Parsed& im, std::map<std::string, std::string>* out) {
    const auto& list = im.manifest.originals;
    bool v3 = im.manifest.format == "layover-patch/3";
    if (v3 ? im.have_originals : !im.one_sizes.empty())
        return base::error(std::string("a ") + im.manifest.format + " patch has a " +
                           (v3 ? kOriginalsName : kOriginalName) + " member; the patch was altered");
    if (v3) {
        if (im.one_sizes.size() < list.size())
            return base::error("the manifest lists " + lim(list.size()) + " originals but the patch has " +
                               lim(im.one_sizes.size()) + " " + kOriginalName + " members (cut off?)");
        if (im.one_sizes.size() > list.size())
            return base::error(std::string("the patch has more ") + kOriginalName +
                               " members than the manifest lists originals; the patch was altered");
        for (size_t i = 0; i < list.size(); i++)
            if (im.one_sizes[i] != list[i].size)
                return base::error("original #" + lim(i + 1) + " holds " + lim(im.one_sizes[i]) +
                                   " bytes, the manifest says " + lim(list[i].size) + "; the patch was altered");
    }
    if (list.empty() && !im.have_originals && im.one_sizes.empty()) return base::Ok();
    if (!v3 && !im.have_originals)
        return base::error("the manifest lists originals but the patch has no " + std::string(kOriginalsName) +
                           " member (cut off?)");
    std::set<std::string_view> modified;
    for (const auto& c : im.manifest.changes)
        if (c.kind == Kind::Modified && c.type == Type::File && c.old_type == Type::File) modified.insert(c.path);
    std::set<std::string_view> bases;
    for (const auto& b : im.manifest.base)
        if (!b.absent && b.type == Type::File && modified.count(b.path)) bases.insert(b.fingerprint);
    uint64_t at = 0;
    for (const auto& o : list) {
        if (o.size > im.originals.size() - at)
            return base::error(std::string(kOriginalsName) +
                               " is shorter than the originals the manifest lists (cut off)");
        std::string data = im.originals.substr(at, o.size);
        at += o.size;
        if (fingerprint_bytes(data) != o.fingerprint)
            return base::error("an original's content does not match its fingerprint " + shown(o.fingerprint) +
                               "; the patch was altered");
        if (!bases.count(o.fingerprint))
            return base::error("original " + shown(o.fingerprint) +
                               " matches no modified file's base record; the patch was altered");
        if (!out->emplace(o.fingerprint, std::move(data)).second)
            return base::error("original " + shown(o.fingerprint) + " is listed twice");
    }
    if (at != im.originals.size())
        return base::error(std::string(kOriginalsName) + " holds more than the originals the manifest lists");
    return base::Ok();
}

HeaderBudget budget_of(const Limits& l) {
    HeaderBudget b;
    b.max_pax_header = l.max_pax_header;
    b.max_sparse_segments = l.max_sparse_segments;
    return b;
}

// A GNU sparse 1.0 map is read with the headers but is not one: allow what
// its entries can take (two decimal int64 lines each, the count line, the
// padding, and a closing zero-length entry), so a file with
// max_sparse_segments segments reads, while a map padded with extra
// entries does not.
uint64_t sparse_map_allowance(archive_entry* e) {
    int count = archive_entry_sparse_count(e);
    if (count <= 0) return 0;
    return (static_cast<uint64_t>(count) + 2) * 2 * 21 + 512;
}

Result<void> validate(int fd, const Limits& l, Parsed* im) {
    TarIn t(fd, budget_of(l));
    TRY_VOID(t.open());
    Validator v(l);
    std::vector<std::pair<std::string, std::string>> computed;
    bool have_sums = false;
    // The manifest (first member) is parsed on a second thread while the
    // members after it are read and hashed; nothing needs it before the
    // agreement check at the end.
    std::string manifest_text;
    Result<Manifest> manifest = base::error("");
    bool parsing = false;
    base::StackThread parser;
    auto members = [&]() -> Result<void> {
        for (uint64_t index = 0;; index++) {
            uint64_t hb = 0;
            TRY(archive_entry * e, t.next(&hb));
            if (!e) return base::Ok();
            if (hb > l.max_pax_header + sparse_map_allowance(e))
                return base::error("member #" + lim(index) + " has " + lim(hb) +
                                   " bytes of headers, over the limit of " + lim(l.max_pax_header) +
                                   "; raise --max-pax-header if you trust it");
            if (index >= l.max_members + 2)
                return base::error("the patch has more than " + lim(l.max_members) +
                                   " members; raise --max-members if you trust it");
            if (have_sums) return base::error(std::string("a member follows ") + kSumsName + ", which must be last");
            const char* raw = archive_entry_pathname(e);
            std::string name = raw ? raw : "";
            bool regular = archive_entry_filetype(e) == AE_IFREG && !archive_entry_hardlink(e);
            if (index == 0) {
                if (name != kManifestName || !regular)
                    return base::error(std::string("not a layover patch: the first member is not ") + kManifestName);
                TRY(manifest_text, read_small(t, l.max_manifest, kManifestName, archive_entry_size(e)));
                // Every payload member is a change in the manifest, each well
                // over 128 bytes of it: room for them all without regrowing.
                im->members.reserve(std::min<uint64_t>(manifest_text.size() / 128, l.max_members) + 2);
                im->stored.reserve(im->members.capacity());
                v.reserve(im->members.capacity());
                computed.emplace_back(name, fingerprint_bytes(manifest_text));
                auto parse = [&] { manifest = manifest_from_text(manifest_text); };
                parsing = true;
                if (!parser.start(parse)) parse();
                continue;
            }
            if (name == kManifestName) return base::error(std::string("the patch has a second ") + kManifestName);
            if (name == kOriginalsName) {
                if (im->have_originals) return base::error(std::string("the patch has a second ") + kOriginalsName);
                if (!regular) return base::error(std::string(kOriginalsName) + " is not a regular file");
                TRY(im->originals, read_small(t, l.max_manifest, kOriginalsName, archive_entry_size(e)));
                computed.emplace_back(name, fingerprint_bytes(im->originals));
                im->have_originals = true;
                continue;
            }
            if (name == kOriginalName) {
                if (!regular) return base::error(std::string(kOriginalName) + " is not a regular file");
                uint64_t room = l.max_manifest - std::min<uint64_t>(l.max_manifest, im->originals.size());
                TRY(std::string one, read_small(t, room, kOriginalName, archive_entry_size(e)));
                computed.emplace_back(name, fingerprint_bytes(one));
                im->one_sizes.push_back(one.size());
                im->originals += one;
                continue;
            }
            if (name == kSumsName) {
                if (!regular) return base::error(std::string(kSumsName) + " is not a regular file");
                TRY(std::string text, read_small(t, l.max_manifest, kSumsName, archive_entry_size(e)));
                TRY(im->sums, sums_from_text(text));
                have_sums = true;
                continue;
            }
            std::string tar_name;
            TRY(Member m, v.member(e, &tar_name));
            std::string fp;
            StoredData where;
            if (m.kind == Member::Kind::File) {
                where.offset = t.position();
                DataSink keep;
                if (m.sparse.empty() && (where.kept = im->kept.reserve(m.size)) >= 0) {
                    char* to = im->kept.at(where.kept);  // stream_data checks each piece lies within m.size
                    keep = [to](uint64_t o, const char* p, size_t n) -> Result<void> {
                        std::memcpy(to + o, p, n);
                        return base::Ok();
                    };
                }
                TRY(fp, stream_data(t, m, &v, keep, &where.bytes));
                if (where.bytes != expected_stored(m))
                    return base::error("member " + shown(m.path) +
                                       ": its stored data does not match its size or sparse map");
            } else {
                fp = fp_of_meta(m);
            }
            where.sum = computed.size();
            computed.emplace_back(tar_name, fp);
            im->members.push_back(std::move(m));
            im->stored.push_back(where);
        }
    };
    auto r = members();
    im->kept.settle();
    parser.join();
    // A bad manifest comes first in the stream, so it is the error reported.
    if (parsing) {
        if (!manifest) return manifest.error();
        im->manifest = std::move(manifest.value());
    }
    if (!r) return r;
    if (!have_sums)
        return base::error(std::string("the patch is truncated or incomplete: no ") + kSumsName + " member");
    TRY_VOID(t.finish(1 << 20));
    im->marks = t.stream().marks();
    if (computed.size() != im->sums.size())
        return base::error(std::string(kSumsName) + " lists " + lim(im->sums.size()) + " members, the patch has " +
                           lim(computed.size()));
    for (size_t i = 0; i < computed.size(); i++) {
        if (computed[i].first != im->sums[i].first)
            return base::error(std::string(kSumsName) + " does not match member " +
                               base::display_path(computed[i].first));
        if (computed[i].second != im->sums[i].second)
            return base::error("fingerprint mismatch for member " + base::display_path(computed[i].first) +
                               ": the patch is corrupt or was altered");
    }
    std::string why = check_agreement(im->manifest, im->members, l);
    if (!why.empty()) return base::error(why);
    return base::Ok();
}

// A patch cut short or damaged on its way (a copy stopped early, a bad
// disk, an edit): the reader's reason, then the fix, on the one line.
base::Error invalid(const base::Error& e, const std::string& file) {
    base::Error out = e.context("invalid patch " + base::display_path(file));
    for (const char* damage : {"the patch is truncated", "the patch is corrupt", "the patch was altered"})
        if (out.message.find(damage) != std::string::npos) {
            out.message += "; copy it again whole, or ask for a new 'layover save -o FILE'";
            break;
        }
    return out;
}

}  // namespace

const std::string* Patch::original(const std::string& fingerprint) const {
    auto it = impl_->original_by_fp.find(fingerprint);
    return it == impl_->original_by_fp.end() ? nullptr : &it->second;
}

Result<Patch> Patch::open(const std::string& file, const Limits& limits) {
    Patch p;
    p.impl_->file = file;
    p.impl_->limits = limits;
    // O_NONBLOCK: a fifo given as the patch fails the check below instead
    // of hanging in open (reads of a regular file ignore the flag).
    auto fd = base::open_at(AT_FDCWD, file, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (!fd && fd.error().code == ENOENT)
        return base::error("no patch file " + base::display_path(file) +
                           "; check the path (a patch is what 'layover save -o FILE' wrote)");
    if (!fd) return base::error("cannot open patch " + file + ": " + fd.error().message);
    struct stat st;
    if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode))
        return base::error("patch " + file + " is not a regular file");
    ::fcntl(fd->get(), F_SETFL, ::fcntl(fd->get(), F_GETFL) & ~O_NONBLOCK);
    p.impl_->fd = std::move(fd.value());
    Parsed parsed;
    parsed.kept = KeptData(limits.keep_decoded);
    auto r = validate(p.impl_->fd.get(), limits, &parsed);
    if (!r) return invalid(r.error(), file);
    if (auto o = check_originals(parsed, &p.impl_->original_by_fp); !o) return invalid(o.error(), file);
    p.impl_->manifest = std::move(parsed.manifest);
    p.impl_->members = std::move(parsed.members);
    p.impl_->sums = std::move(parsed.sums);
    p.impl_->stored = std::move(parsed.stored);
    p.impl_->marks = std::move(parsed.marks);
    p.impl_->kept = std::move(parsed.kept);
    return p;
}

}  // namespace capture
