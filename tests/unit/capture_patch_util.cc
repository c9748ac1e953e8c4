#include "tests/unit/capture_patch_util.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "capture/patch/manifest.h"
#include "capture/scan/entry/fingerprint.h"
#include "helper/base/text.h"

namespace testpatch {

namespace {

la_ssize_t collect(struct archive*, void* ctx, const void* buf, size_t len) {
    static_cast<std::string*>(ctx)->append(static_cast<const char*>(buf), len);
    return static_cast<la_ssize_t>(len);
}

std::string file_bytes(const M& m) {
    if (m.sparse.empty()) return m.data;
    return "";
}

std::string fp_of(const M& m) {
    if (m.type == 'l' || m.type == 'h') return capture::fingerprint_bytes(m.link);
    if (m.type != 'f') return capture::fingerprint_bytes("");
    if (m.sparse.empty()) return capture::fingerprint_bytes(m.data);
    capture::Fingerprint f;
    for (auto [off, len] : m.sparse) {
        std::string x(static_cast<size_t>(len), 'x');
        f.data(static_cast<uint64_t>(off), x.data(), x.size());
    }
    return f.finish(static_cast<uint64_t>(m.size));
}

}  // namespace

std::string tar_of(const std::vector<M>& members) {
    std::string out;
    struct archive* a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    archive_write_set_bytes_in_last_block(a, 1);
    archive_write_open(a, &out, nullptr, collect, nullptr);
    for (const auto& m : members) {
        archive_entry* e = archive_entry_new();
        archive_entry_copy_pathname(e, m.name.c_str());
        archive_entry_set_perm(e, m.mode);
        switch (m.type) {
            case 'd': archive_entry_set_filetype(e, AE_IFDIR); break;
            case 'l':
                archive_entry_set_filetype(e, AE_IFLNK);
                archive_entry_copy_symlink(e, m.link.c_str());
                break;
            case 'h':
                archive_entry_set_filetype(e, AE_IFREG);
                archive_entry_copy_hardlink(e, m.link.c_str());
                break;
            case 'p': archive_entry_set_filetype(e, AE_IFIFO); break;
            case 'c':
                archive_entry_set_filetype(e, AE_IFCHR);
                archive_entry_set_rdev(e, 0x0103);
                break;
            default: archive_entry_set_filetype(e, AE_IFREG);
        }
        for (const auto& [n, v] : m.xattrs) archive_entry_xattr_add_entry(e, n.c_str(), v.data(), v.size());
        if (m.type == 'f') {
            archive_entry_set_size(e, m.size >= 0 ? m.size : static_cast<la_int64_t>(m.data.size()));
            for (auto [off, len] : m.sparse) archive_entry_sparse_add_entry(e, off, len);
        }
        if (archive_write_header(a, e) < ARCHIVE_WARN) throw std::runtime_error(archive_error_string(a));
        if (m.type == 'f') {
            if (m.sparse.empty()) {
                archive_write_data(a, m.data.data(), m.data.size());
            } else {
                // Holes are passed through as bytes libarchive skips, from a
                // never-touched mapping (they may be terabytes).
                const size_t window = size_t{1} << 30;
                void* zeros = ::mmap(nullptr, window, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
                if (zeros == MAP_FAILED) throw std::runtime_error("mmap");
                int64_t pos = 0;
                for (auto [off, len] : m.sparse) {
                    for (int64_t hole = off - pos; hole > 0;) {
                        size_t n = static_cast<size_t>(std::min<int64_t>(hole, static_cast<int64_t>(window)));
                        archive_write_data(a, zeros, n);
                        hole -= static_cast<int64_t>(n);
                    }
                    std::string x(static_cast<size_t>(len), 'x');
                    archive_write_data(a, x.data(), x.size());
                    pos = off + len;
                }
                ::munmap(zeros, window);
            }
        }
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    (void)file_bytes;
    return out;
}

std::string manifest_for(const std::vector<M>& members) {
    capture::Manifest mf;
    mf.format = "layover-patch/1";
    mf.target = "/tmp/target";
    mf.session = "test";
    for (const auto& m : members) {
        capture::Change c;
        c.path = m.name;
        c.kind = capture::Kind::Added;
        c.mode = m.mode;
        switch (m.type) {
            case 'd': c.type = capture::Type::Dir; break;
            case 'l':
                c.type = capture::Type::Symlink;
                c.link_target = m.link;
                break;
            case 'p': c.type = capture::Type::Fifo; break;
            default:
                c.type = capture::Type::File;
                c.size = m.size >= 0 ? static_cast<uint64_t>(m.size) : m.data.size();
                // A hard link lists its target's size (the same inode), as save writes it.
                for (const auto& t : members)
                    if (m.type == 'h' && t.name == m.link)
                        c.size = t.size >= 0 ? static_cast<uint64_t>(t.size) : t.data.size();
        }
        for (const auto& [n, v] : m.xattrs) c.xattrs[n] = v;
        mf.changes.push_back(c);
        capture::BaseEntry b;
        b.path = m.name;
        b.absent = true;
        mf.base.push_back(b);
    }
    return capture::manifest_to_text(mf);
}

std::string sums_for(const std::string& manifest, const std::vector<M>& members) {
    capture::json j = {{"format", "layover-sums/1"}, {"members", capture::json::array()}};
    capture::json first = capture::json::object();
    put_bytes(first, "path", ".layover/manifest.json");
    first["fingerprint"] = capture::fingerprint_bytes(manifest);
    j["members"].push_back(first);
    for (const auto& m : members) {
        capture::json x = capture::json::object();
        put_bytes(x, "path", m.name);
        x["fingerprint"] = fp_of(m);
        j["members"].push_back(x);
    }
    return j.dump();
}

void write_zst(const std::string& path, const std::string& raw, bool checksum) {
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum ? 1 : 0);
    std::string out(ZSTD_compressBound(raw.size()), '\0');
    size_t n = ZSTD_compress2(c, out.data(), out.size(), raw.data(), raw.size());
    ZSTD_freeCCtx(c);
    if (ZSTD_isError(n)) throw std::runtime_error("zstd");
    out.resize(n);
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(out.data(), 1, out.size(), f);
    std::fclose(f);
}

std::string valid_tar(const std::vector<M>& members) {
    std::string manifest = manifest_for(members);
    std::vector<M> all;
    M mm;
    mm.name = ".layover/manifest.json";
    mm.data = manifest;
    all.push_back(mm);
    all.insert(all.end(), members.begin(), members.end());
    M sm;
    sm.name = ".layover/sums";
    sm.data = sums_for(manifest, members);
    all.push_back(sm);
    return tar_of(all);
}

namespace {

std::string header_block(const std::string& name, char type, size_t size) {
    std::string h(512, '\0');
    std::memcpy(&h[0], name.data(), std::min<size_t>(name.size(), 100));
    std::snprintf(&h[100], 8, "%07o", 0644);
    std::snprintf(&h[108], 8, "%07o", 0);
    std::snprintf(&h[116], 8, "%07o", 0);
    std::snprintf(&h[124], 12, "%011zo", size);
    std::snprintf(&h[136], 12, "%011o", 0);
    h[156] = type;
    std::memcpy(&h[257], "ustar", 6);
    std::memcpy(&h[263], "00", 2);
    std::memset(&h[148], ' ', 8);
    unsigned sum = 0;
    for (unsigned char ch : h) sum += ch;
    std::snprintf(&h[148], 8, "%06o", sum);
    h[155] = ' ';
    return h;
}

std::string padded(const std::string& data) {
    std::string out = data;
    out.resize((data.size() + 511) / 512 * 512, '\0');
    return out;
}

}  // namespace

std::string pax_override_member(const std::string& ustar_name, const std::string& pax_path, const std::string& data) {
    std::string rec = " path=" + pax_path + "\n";
    size_t len = rec.size();
    len += std::to_string(len + std::to_string(len).size()).size();
    rec = std::to_string(len) + rec;
    return header_block("PaxHeader/x", 'x', rec.size()) + padded(rec) + header_block(ustar_name, '0', data.size()) +
           padded(data);
}

std::string pax_member(const std::string& ustar_name, const std::vector<std::pair<std::string, std::string>>& records,
                       char type, const std::string& body) {
    std::string pax;
    for (const auto& [k, v] : records) {
        std::string rec = " " + k + "=" + v + "\n";
        size_t len = rec.size() + std::to_string(rec.size()).size();
        if (std::to_string(len).size() != std::to_string(rec.size()).size()) len++;
        pax += std::to_string(len) + rec;
    }
    return header_block("PaxHeader/x", 'x', pax.size()) + padded(pax) + header_block(ustar_name, type, body.size()) +
           padded(body);
}

std::string tar_end() { return std::string(1024, '\0'); }

namespace {

using capture::Type;
using json = nlohmann::json;

json type_json(Type t) { return t == Type::None ? json(nullptr) : json(capture::type_name(t)); }

}  // namespace

void put_bytes(json& j, const std::string& key, const std::string& raw) {
    if (base::is_utf8(raw)) {
        j[key] = raw;
    } else {
        j[key] = base::display_path(raw);
        j[key + "_b64"] = base::base64_encode(raw);
    }
}

bool get_bytes(const json& j, const std::string& key, std::string* out) {
    auto b = j.find(key + "_b64");
    if (b != j.end()) return b->is_string() && base::base64_decode(b->get<std::string>(), out);
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return false;
    *out = it->get<std::string>();
    return true;
}

json change_to_json(const capture::Change& c, bool full) {
    json j = json::object();
    put_bytes(j, "path", c.path);
    j["kind"] = capture::kind_name(c.kind);
    j["type"] = type_json(c.type);
    j["size"] = c.size;
    j["mode"] = c.mode;
    j["old_type"] = type_json(c.old_type);
    j["old_mode"] = c.old_mode;
    if (c.type == Type::Symlink) put_bytes(j, "link_target", c.link_target);
    else j["link_target"] = nullptr;
    j["captured"] = c.captured;
    if (full) {
        j["mtime_ns"] = c.mtime_ns;
        json xs = json::array();
        for (const auto& [name, value] : c.xattrs) {
            json x = json::object();
            put_bytes(x, "name", name);
            x["value_b64"] = base::base64_encode(value);
            xs.push_back(std::move(x));
        }
        j["xattrs"] = std::move(xs);
    }
    return j;
}

json base_to_json(const capture::BaseEntry& b) {
    json j = json::object();
    put_bytes(j, "path", b.path);
    if (b.absent) {
        j["absent"] = true;
        return j;
    }
    j["type"] = capture::type_name(b.type);
    j["size"] = b.size;
    j["mode"] = b.mode;
    j["fingerprint"] = b.fingerprint.empty() ? json(nullptr) : json(b.fingerprint);
    j["stale"] = b.stale;
    return j;
}

}  // namespace testpatch
