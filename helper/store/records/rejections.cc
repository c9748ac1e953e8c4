#include "helper/store/records/rejections.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "helper/base/fd.h"
#include "helper/base/fs/replace_file.h"
#include "helper/base/json/reader.h"
#include "helper/base/json/writer.h"
#include "helper/base/text.h"

namespace session {

namespace {

const char kFile[] = "/rejections.json";
constexpr size_t kMaxFile = 64u << 20;
constexpr size_t kMaxToken = 80;    // a fingerprint or a time
constexpr size_t kMaxPath = 65536;  // as a patch's paths (capture::Limits::max_name_len)

base::Error bad(const std::string& what) { return base::error("rejections: " + what); }

bool clean_path(const std::string& p) {
    if (p.empty() || p.size() > kMaxPath || p.front() == '/' || p.find('\0') != std::string::npos) return false;
    for (size_t a = 0; a <= p.size();) {
        size_t b = p.find('/', a);
        if (b == std::string::npos) b = p.size();
        std::string_view part(p.data() + a, b - a);
        if (part.empty() || part == "." || part == "..") return false;
        a = b + 1;
    }
    return true;
}

// Fingerprints and times: short, of [A-Za-z0-9:+._-].
bool token(const std::string& s) {
    if (s.size() > kMaxToken) return false;
    for (unsigned char c : s)
        if (!(std::isalnum(c) || c == ':' || c == '+' || c == '.' || c == '_' || c == '-')) return false;
    return true;
}

base::Result<Rejection> read_one(base::jsonread::Parser& p) {
    Rejection r;
    std::string shown, b64;
    bool has_b64 = false, has_path = false;
    if (!p.begin_object()) return bad("a record is not an object");
    std::string_view k;
    while (p.next_key(&k)) {
        base::jsonread::Number num;
        uint64_t v = 0;
        if (k == "seq") {
            if (!p.number(&num) || !num.to_unsigned(UINT64_MAX / 2, &v) || v == 0)
                return bad("a \"seq\" is not 1 or more");
            r.seq = v;
        } else if (k == "hunk") {
            if (!p.number(&num) || !num.to_unsigned(kMaxHunk, &v)) return bad("a \"hunk\" is out of range");
            r.hunk = static_cast<uint32_t>(v);
        } else if (k == "path") {
            if (!p.string(&shown)) return bad("a \"path\" is not a string");
            has_path = true;
        } else if (k == "path_b64") {
            if (!p.string(&b64)) return bad("a \"path_b64\" is not a string");
            has_b64 = true;
        } else if (k == "reason") {
            if (!p.string(&r.reason) || !reason_problem(r.reason).empty())
                return bad("a \"reason\" is not one short line");
        } else if (k == "time" || k == "fingerprint" || k == "hunk_fingerprint") {
            std::string s;
            if (!p.string(&s) || !token(s)) return bad("a \"" + std::string(k) + "\" is malformed");
            (k == "time" ? r.time : k == "fingerprint" ? r.fingerprint : r.hunk_fingerprint) = s;
        } else if (!p.skip()) {
            return bad("malformed JSON");
        }
    }
    if (!p.ok()) return bad("malformed JSON");
    if (has_b64) {
        if (!base::base64_decode(b64, &r.path)) return bad("a \"path_b64\" is not base64");
    } else if (has_path) {
        r.path = shown;
    }
    if (!r.seq) return bad("a record has no \"seq\"");
    if (!clean_path(r.path)) return bad("a record's path is not a clean relative path");
    if (r.fingerprint.empty()) return bad("a record has no \"fingerprint\"");
    if ((r.hunk == 0) != r.hunk_fingerprint.empty())
        return bad("a hunk record needs a \"hunk_fingerprint\" (and only it)");
    return r;
}

base::Result<void> write_file(const std::string& dir, const Rejections& r) {
    std::string text = rejections_to_text(r);
    return base::replace_file(dir + kFile, dir + "/.rejections.json.tmp", text, "saving " + dir + kFile);
}

}  // namespace

std::string reason_problem(std::string_view reason) {
    if (reason.size() > kMaxReason) return "longer than " + std::to_string(kMaxReason) + " bytes";
    for (unsigned char c : reason)
        if (c < 0x20 || c == 0x7f) return "not one line of text (it has a control character)";
    return "";
}

std::string rejections_to_text(const Rejections& r) {
    std::string o = "{";
    base::json::key(&o, "format");
    base::json::str(&o, "layover-rejections/1");
    o += ", ";
    base::json::key(&o, "next_seq");
    base::json::num(&o, r.next_seq);
    o += ", ";
    base::json::key(&o, "rejections");
    o += "[";
    for (size_t i = 0; i < r.list.size(); i++) {
        const Rejection& x = r.list[i];
        o += i ? ",\n  {" : "\n  {";
        base::json::key(&o, "seq");
        base::json::num(&o, x.seq);
        o += ", ";
        base::json::field_bytes(&o, "path", x.path);
        o += ", ";
        base::json::key(&o, "hunk");
        base::json::num(&o, x.hunk);
        o += ", ";
        base::json::key(&o, "reason");
        base::json::str(&o, x.reason);
        o += ", ";
        base::json::key(&o, "time");
        base::json::str(&o, x.time);
        o += ", ";
        base::json::key(&o, "fingerprint");
        base::json::str(&o, x.fingerprint);
        if (x.hunk) {
            o += ", ";
            base::json::key(&o, "hunk_fingerprint");
            base::json::str(&o, x.hunk_fingerprint);
        }
        o += "}";
    }
    return o + "]}\n";
}

base::Result<Rejections> rejections_from_text(std::string_view text) {
    base::jsonread::Parser p(text);
    Rejections out;
    bool has_format = false;
    if (!p.begin_object()) return bad("not a JSON object");
    std::string_view k;
    while (p.next_key(&k)) {
        if (k == "format") {
            std::string f;
            if (!p.string(&f) || f != "layover-rejections/1") return bad("unknown \"format\"");
            has_format = true;
        } else if (k == "next_seq") {
            base::jsonread::Number num;
            uint64_t v = 0;
            if (!p.number(&num) || !num.to_unsigned(UINT64_MAX / 2, &v) || v == 0)
                return bad("\"next_seq\" is not 1 or more");
            out.next_seq = v;
        } else if (k == "rejections") {
            if (!p.begin_array()) return bad("\"rejections\" is not an array");
            while (p.next_item()) {
                if (out.list.size() >= kMaxRejections) return bad("too many records");
                TRY(Rejection r, read_one(p));
                if (!out.list.empty() && r.seq <= out.list.back().seq) return bad("records are not in seq order");
                out.list.push_back(std::move(r));
            }
        } else if (!p.skip()) {
            return bad("malformed JSON");
        }
    }
    if (!p.ok() || !p.finish()) return bad("malformed JSON");
    if (!has_format) return bad("no \"format\"");
    if (!out.list.empty() && out.next_seq <= out.list.back().seq) out.next_seq = out.list.back().seq + 1;
    return out;
}

base::Result<Rejections> read_rejections(const std::string& dir) {
    std::string file = dir + kFile;
    auto fd = base::open_at(AT_FDCWD, file, O_RDONLY | O_NOFOLLOW);
    if (!fd) {
        if (fd.error().code == ENOENT) return Rejections{};
        return fd.error();
    }
    auto read = base::read_all(fd->get(), kMaxFile);
    if (!read) {
        if (read.error().code) return base::sys_error("reading " + file, read.error().code);
        return base::error(file + " is too large; remove it (its rejections are then forgotten)");
    }
    auto r = rejections_from_text(read.value());
    if (!r)
        return base::error(file + " is malformed (" + r.error().message +
                           "); remove it (its rejections are then forgotten)");
    return r;
}

base::Result<uint64_t> add_rejection(const std::string& dir, Rejection r) {
    if (!clean_path(r.path)) return bad("not a clean relative path: " + base::display_path(r.path));
    std::string why = reason_problem(r.reason);
    if (!why.empty()) return base::error("the reason is " + why + "; give one short line");
    if (r.fingerprint.empty() || !token(r.fingerprint) || !token(r.time) || !token(r.hunk_fingerprint) ||
        (r.hunk == 0) != r.hunk_fingerprint.empty() || r.hunk > kMaxHunk)
        return bad("a malformed record");
    TRY(Rejections all, read_rejections(dir));
    if (all.list.size() >= kMaxRejections)
        return bad("the session has too many; discard some (layover discard NAME --rejected)");
    auto same = [&](const Rejection& x) { return x.path == r.path && x.hunk == r.hunk; };
    all.list.erase(std::remove_if(all.list.begin(), all.list.end(), same), all.list.end());
    r.seq = all.next_seq++;
    all.list.push_back(std::move(r));
    TRY_VOID(write_file(dir, all));
    return all.list.back().seq;
}

base::Result<void> remove_rejections(const std::string& dir, const std::vector<uint64_t>& seqs) {
    if (seqs.empty()) return base::Ok();
    TRY(Rejections all, read_rejections(dir));
    auto gone = [&](const Rejection& x) { return std::find(seqs.begin(), seqs.end(), x.seq) != seqs.end(); };
    all.list.erase(std::remove_if(all.list.begin(), all.list.end(), gone), all.list.end());
    return write_file(dir, all);
}

}  // namespace session
