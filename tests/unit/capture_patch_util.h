// Builds patch files for reader tests, including hostile ones: members are
// written with libarchive (or as raw tar blocks), compressed with zstd.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "capture/scan/entry/change.h"

namespace testpatch {

struct M {
    std::string name;
    char type = 'f';   // f file, d dir, l symlink, h hardlink, p fifo, c char device
    std::string data;  // file data (dense), ignored for sparse
    std::string link;  // symlink/hardlink target
    uint32_t mode = 0644;
    int64_t size = -1;                                        // logical size override (sparse)
    std::vector<std::pair<int64_t, int64_t>> sparse;          // data segments; their data is 'x' bytes
    std::vector<std::pair<std::string, std::string>> xattrs;  // name, value (in the member and the manifest)
};

// Raw uncompressed tar of the members (pax restricted, via libarchive).
std::string tar_of(const std::vector<M>& members);
// A manifest agreeing with members, where every file is "added" with an absent base.
std::string manifest_for(const std::vector<M>& members);
// The .layover/sums text for the members (manifest first), fingerprints computed.
std::string sums_for(const std::string& manifest, const std::vector<M>& members);
// zstd-compress (checksums on unless told otherwise) into a file.
void write_zst(const std::string& path, const std::string& raw, bool checksum = true);
// A complete, valid patch: manifest, members, sums. Hooks let tests corrupt it.
std::string valid_tar(const std::vector<M>& members);
// A raw ustar header block + pax 'x' header overriding the path.
std::string pax_override_member(const std::string& ustar_name, const std::string& pax_path, const std::string& data);
// A raw member: a pax 'x' header holding the records (written in order, as
// "LEN key=value\n"), then a ustar header of the given type and the body
// (padded; the ustar size field says body.size()).
std::string pax_member(const std::string& ustar_name, const std::vector<std::pair<std::string, std::string>>& records,
                       char type, const std::string& body);
// Two 512-byte zero blocks.
std::string tar_end();

// The oracle for capture's hand-written JSON: the same objects built with
// nlohmann's DOM, straight from docs/patch-format.md (tests only).
void put_bytes(nlohmann::json& j, const std::string& key, const std::string& raw);
// The raw bytes of key (from key_b64 when present); false if missing/invalid.
bool get_bytes(const nlohmann::json& j, const std::string& key, std::string* out);
// full: also mtime_ns and xattrs (the manifest); otherwise the CLI contract fields.
nlohmann::json change_to_json(const capture::Change& c, bool full);
nlohmann::json base_to_json(const capture::BaseEntry& b);

}  // namespace testpatch
