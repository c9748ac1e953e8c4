#include "helper/store/layers/steps.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <set>

#include "helper/base/clock.h"
#include "helper/base/dir.h"
#include "helper/base/fault.h"
#include "helper/base/fd.h"
#include "helper/base/json/reader.h"
#include "helper/base/json/writer.h"
#include "helper/base/text.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/records/rename_temps.h"

namespace steps {

namespace {

constexpr size_t kMaxRecord = 64u << 20;  // bytes of one record file
constexpr size_t kMaxLabel = 4096;
// A path's bytes: as many as a patch's (capture::Limits::max_name_len), so
// a step holding a path a patch may carry keeps its record.
constexpr size_t kMaxPath = 65536;

std::string four(int n) {
    char b[16];
    std::snprintf(b, sizeof b, "%04d", n);
    return b;
}

bool known_kind(std::string_view k) { return k == "A" || k == "M" || k == "D" || k == "T" || k == "mode"; }

base::Result<std::string> read_text(const std::string& path) {
    TRY(base::Fd fd, base::open_at(AT_FDCWD, path, O_RDONLY | O_NOFOLLOW));
    return base::read_all(fd.get(), kMaxRecord);
}

base::Result<void> write_text(const std::string& path, const std::string& text) { return replace_file(path, text); }

bool layer_is_empty(const std::string& dir) {
    auto fd = base::open_at(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (!fd) return false;
    auto names = base::list_dir(fd->get());
    return names && names->empty();
}

base::Error bad(const std::string& what) { return base::error("step record: " + what); }

// One {"path": ..., ["path_b64": ...], "kind": ...}.
base::Result<Touched> read_touched(base::jsonread::Parser& p) {
    Touched t;
    std::string shown, b64;
    bool has_b64 = false;
    if (!p.begin_object()) return bad("a path entry is not an object");
    std::string_view k;
    while (p.next_key(&k)) {
        if (k == "path") {
            if (!p.string(&shown)) return bad("\"path\" is not a string");
        } else if (k == "path_b64") {
            if (!p.string(&b64)) return bad("\"path_b64\" is not a string");
            has_b64 = true;
        } else if (k == "kind") {
            if (!p.string(&t.kind) || !known_kind(t.kind)) return bad("unknown path kind");
        } else if (!p.skip()) {
            return bad("malformed JSON");
        }
    }
    if (!p.ok()) return bad("malformed JSON");
    if (has_b64) {
        if (!base::base64_decode(b64, &t.path)) return bad("\"path_b64\" is not base64");
    } else {
        t.path = shown;
    }
    if (t.kind.empty()) return bad("a path entry has no kind");
    if (t.path.empty() || t.path.size() > kMaxPath || t.path.front() == '/' || t.path.find('\0') != std::string::npos)
        return bad("a path entry is not a relative path");
    for (size_t a = 0; a <= t.path.size();) {
        size_t b = t.path.find('/', a);
        if (b == std::string::npos) b = t.path.size();
        std::string_view part(t.path.data() + a, b - a);
        if (part.empty() || part == "." || part == "..") return bad("a path entry is not a relative path");
        a = b + 1;
    }
    return t;
}

base::Result<std::string> read_string(base::jsonread::Parser& p, const char* key, size_t max) {
    std::string s;
    if (!p.string(&s)) return bad(std::string("\"") + key + "\" is not a string");
    if (s.size() > max) return bad(std::string("\"") + key + "\" is too long");
    return s;
}

}  // namespace

std::string steps_dir(const std::string& d) { return d + "/steps"; }
std::string layer_dir(const std::string& d, int n) { return steps_dir(d) + "/" + four(n); }
std::string record_file(const std::string& d, int n) { return layer_dir(d, n) + ".json"; }

void record_json(std::string* out, const Record& r) {
    std::string& o = *out;
    o += "{";
    base::json::key(&o, "step");
    base::json::num(&o, static_cast<uint64_t>(r.n));
    o += ", ";
    base::json::key(&o, "label");
    base::json::str(&o, r.label);
    o += ", ";
    base::json::key(&o, "start");
    base::json::str(&o, r.start);
    o += ", ";
    base::json::key(&o, "end");
    base::json::str(&o, r.end);
    if (r.squashed) o += ", \"squashed\": true";
    if (r.live) o += ", \"live\": true";
    if (r.pending) o += ", \"pending\": true";
    o += ", ";
    base::json::key(&o, "paths");
    o += "[";
    for (size_t i = 0; i < r.paths.size(); i++) {
        o += i ? ",\n  {" : "\n  {";
        base::json::field_bytes(&o, "path", r.paths[i].path);
        o += ", ";
        base::json::key(&o, "kind");
        base::json::str(&o, r.paths[i].kind);
        o += "}";
    }
    o += "]}";
}

std::string record_to_text(const Record& r) {
    std::string o;
    record_json(&o, r);
    return o + "\n";
}

base::Result<Record> read_record(base::jsonread::Parser& p) {
    Record r;
    unsigned seen = 0;  // a known field given twice is refused, as in a manifest
    auto once = [&](unsigned bit) {
        bool fresh = !(seen & bit);
        seen |= bit;
        return fresh;
    };
    if (!p.begin_object()) return bad("not a JSON object");
    std::string_view k;
    while (p.next_key(&k)) {
        unsigned bit = k == "step"       ? 1
                       : k == "label"    ? 2
                       : k == "start"    ? 4
                       : k == "end"      ? 8
                       : k == "paths"    ? 16
                       : k == "squashed" ? 32
                       : k == "live"     ? 64
                       : k == "pending"  ? 128
                                         : 0;
        if (bit && !once(bit)) return bad("field \"" + std::string(k) + "\" given twice");
        if (k == "step") {
            base::jsonread::Number num;
            uint64_t v = 0;
            if (!p.number(&num) || !num.to_unsigned(kMaxSteps + 1, &v) || v == 0) return bad("\"step\" is not 1..9999");
            r.n = static_cast<int>(v);
        } else if (k == "label") {
            TRY(r.label, read_string(p, "label", kMaxLabel));
        } else if (k == "start") {
            TRY(r.start, read_string(p, "start", 64));
        } else if (k == "end") {
            TRY(r.end, read_string(p, "end", 64));
        } else if (k == "squashed" || k == "live" || k == "pending") {
            if (!p.boolean(k == "live" ? &r.live : k == "pending" ? &r.pending : &r.squashed))
                return bad("\"" + std::string(k) + "\" is not a boolean");
        } else if (k == "paths") {
            if (!p.begin_array()) return bad("\"paths\" is not an array");
            while (p.next_item()) {
                TRY(Touched t, read_touched(p));
                r.paths.push_back(std::move(t));
            }
        } else if (!p.skip()) {
            return bad("malformed JSON");
        }
    }
    if (!p.ok()) return bad("malformed JSON");
    if (!(seen & 1)) return bad("no \"step\"");
    if (r.n > kMaxSteps && !r.live) return bad("\"step\" is not 1..9999");
    return r;
}

base::Result<Record> record_from_text(std::string_view text) {
    base::jsonread::Parser p(text);
    TRY(Record r, read_record(p));
    if (!p.finish()) return bad("malformed JSON");
    return r;
}

std::string live_to_text(const Live& l) {
    std::string o = "{";
    base::json::key(&o, "label");
    base::json::str(&o, l.label);
    o += ", ";
    base::json::key(&o, "start");
    base::json::str(&o, l.start);
    if (!l.end.empty()) {
        o += ", ";
        base::json::key(&o, "end");
        base::json::str(&o, l.end);
    }
    return o + "}\n";
}

base::Result<Live> live_from_text(std::string_view text) {
    base::jsonread::Parser p(text);
    Live l;
    if (!p.begin_object()) return bad("not a JSON object");
    std::string_view k;
    while (p.next_key(&k)) {
        if (k == "label") {
            TRY(l.label, read_string(p, "label", kMaxLabel));
        } else if (k == "start") {
            TRY(l.start, read_string(p, "start", 64));
        } else if (k == "end") {
            TRY(l.end, read_string(p, "end", 64));
        } else if (!p.skip()) {
            return bad("malformed JSON");
        }
    }
    if (!p.ok() || !p.finish()) return bad("malformed JSON");
    return l;
}

base::Result<int> count(const std::string& d) {
    int fd = ::open(steps_dir(d).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        return base::sys_error("opening " + steps_dir(d));
    }
    base::Fd dir(fd);
    TRY(auto names, base::list_dir(dir.get()));
    std::set<int> layers;  // a dir NNNN or a reference NNNN.ref (helper/store/layers/layer_store.h); both: one layer
    auto digits4 = [](const std::string& n) {
        return n.size() >= 4 && n.substr(0, 4).find_first_not_of("0123456789") == std::string::npos;
    };
    for (const auto& e : names) {
        const std::string& n = e.name;
        bool dir_name = n.size() == 4 && digits4(n), ref = n.size() == 8 && digits4(n) && n.compare(4, 4, ".ref") == 0;
        if (dir_name || ref) {
            // d_type when the filesystem gives one: every status counts the steps.
            struct stat st;
            bool is_dir = e.type == DT_DIR, is_reg = e.type == DT_REG;
            if (e.type == DT_UNKNOWN) {
                if (::fstatat(dir.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
                    is_dir = S_ISDIR(st.st_mode);
                    is_reg = S_ISREG(st.st_mode);
                }
            }
            if (dir_name ? !is_dir : !is_reg)
                return base::error("step layer " + steps_dir(d) + "/" + n + " is not a " +
                                   (dir_name ? "directory" : "file") + "; remove it");
            layers.insert(std::atoi(n.substr(0, 4).c_str()));
            continue;
        }
        bool record = n.size() == 9 && digits4(n) && n.compare(4, 5, ".json") == 0;
        bool temp = n.size() > 4 && n.compare(n.size() - 4, 4, ".tmp") == 0;
        if (record || temp || n == "live.json") continue;
        return base::error("unexpected entry " + base::display_path(n) + " in " + steps_dir(d) + "; remove it");
    }
    int total = layers.empty() ? 0 : *layers.rbegin();
    // Steps 1..F-1 squashed into layer F (helper/store/layers/squash.cc): no layers,
    // and step F-1's record says so.
    int first = layers.empty() ? 1 : *layers.begin();
    bool squashed = false;
    if (first > 1) {
        auto text = read_text(record_file(d, first - 1));
        auto rec = text ? record_from_text(text.value()) : base::Result<Record>(text.error());
        squashed = rec && rec->squashed;
    }
    for (int i = squashed ? first : 1; i <= total; i++)
        if (!layers.count(i))
            return base::error("step " + std::to_string(i) + " is missing from " + steps_dir(d) +
                               " (steps must be numbered 0001 on without gaps)");
    // A freeze killed between its rename and the fresh upper (docs/history.md,
    // "Faults"): an empty upper is what the session holds, so make it.
    if (total > 0) (void)::mkdirat(AT_FDCWD, (d + "/upper").c_str(), 0755);
    return total;
}

base::Result<std::vector<Record>> read_all(const std::string& d) {
    TRY(int n, count(d));
    std::vector<Record> out;
    for (int i = 1; i <= n; i++) {
        auto text = read_text(record_file(d, i));
        base::Result<Record> r = text ? record_from_text(text.value()) : base::Result<Record>(text.error());
        if (r && r->n != i) r = bad("its number is " + std::to_string(r->n));
        if (r) {
            out.push_back(std::move(r.value()));
            continue;
        }
        Record m;
        m.n = i;
        m.missing = true;
        m.label = "(no record: " + r.error().message + ")";
        out.push_back(std::move(m));
    }
    return out;
}

base::Result<void> write_record(const std::string& d, const Record& r) {
    return write_text(record_file(d, r.n), record_to_text(r));
}

base::Result<void> write_live(const std::string& d, const Live& l) {
    if (::mkdir(steps_dir(d).c_str(), 0700) != 0 && errno != EEXIST) return base::sys_error("creating " + steps_dir(d));
    return write_text(steps_dir(d) + "/live.json", live_to_text(l));
}

base::Result<Live> read_live(const std::string& d) {
    TRY(std::string text, read_text(steps_dir(d) + "/live.json"));
    return live_from_text(text);
}

base::Result<std::string> layer_start(const std::string& d, int n) {
    if (n == 0) {
        TRY(Live l, read_live(d));
        return l.start;
    }
    TRY(std::string text, read_text(record_file(d, n)));
    TRY(Record r, record_from_text(text));
    // The stack's first layer after a squash holds steps 1..n-1 too: it
    // began with the earliest of them ("" where one cannot be read: unknown).
    TRY(int first, first_layer(d));
    for (int i = 1; n == first && i < n && !r.start.empty(); i++) {
        auto below = read_text(record_file(d, i));
        auto b = below ? record_from_text(below.value()) : base::Result<Record>(below.error());
        int64_t at = b ? base::parse_rfc3339(b->start) : -1;
        if (at < 0) return std::string();
        if (at < base::parse_rfc3339(r.start)) r.start = b->start;
    }
    return r.start;
}

void mark_live_ended(const std::string& d, const std::string& end) {
    auto live = read_live(d);
    if (!live) return;
    live->end = end;
    (void)write_live(d, live.value());
}

base::Result<int> freeze_live(const std::string& d, const std::string& target, const std::string& end, int max_depth,
                              const char* phase, bool running) {
    // Layers a running session's squash moved aside: no overlay reads them now.
    if (!running) TRY_VOID(remove_retired(d));
    std::string upper = d + "/upper";
    TRY(base::Fd up, base::open_at(AT_FDCWD, upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    TRY(auto entries, base::list_dir(up.get()));
    if (entries.empty()) return 0;
    // A killed supervisor's rename worker may have left a half-made copy in
    // the upper (helper/store/records/rename_temps.h): swept before it is frozen,
    // never kept in a step (the other sweeps read the live layers only),
    // and what it held alone makes no step. Every freeze but a live
    // checkpoint's comes here (checkpoint, resume, rollback, fork, revert;
    // of a running session under the freeze rule, nothing copying); a live
    // checkpoint's supervisor swept the upper when a worker died
    // (RenameService::sweep_upper): that freeze stays O(1).
    if (!running && rename_temps::sweep_upper(d)) {
        TRY(entries, base::list_dir(up.get()));
        if (entries.empty()) return 0;
    }
    TRY(int n, count(d));
    // A freeze never makes an empty step: an empty top layer whose record
    // names paths is one cut short before its exchange below, and is reused.
    bool reuse = false;
    if (n > 0 && layer_is_empty(layer_dir(d, n))) {
        auto text = read_text(record_file(d, n));
        auto rec = text ? record_from_text(text.value()) : base::Result<Record>(text.error());
        reuse = rec && rec->n == n && (rec->pending || !rec->paths.empty());
    }
    if (reuse) n--;
    if (!running) {
        TRY(bool finished, finish_squash(d));
        (void)finished;
    }
    // Past the depth limit the oldest two layers become one (the records
    // stay); while running, squash_oldest finishes a cut-short one itself.
    TRY_VOID(squash_past(d, target, n + 1, max_depth, running));
    if (::mkdir(steps_dir(d).c_str(), 0700) != 0 && errno != EEXIST) return base::sys_error("creating " + steps_dir(d));
    Record r;
    r.n = n + 1;
    auto live = read_live(d);
    if (live) {
        r.label = live->label;
        r.start = live->start;
    }
    // A resume freezes what the last run made: it ended when that run did.
    r.end = !running && live && !live->end.empty() ? live->end : end;
    // The record before anything moves (a record without its layer is not
    // read, and the next freeze overwrites it). Its touched paths are a walk
    // of the whole layer: left pending, for the first reader (settle), so
    // the freeze stays O(1) whatever the layer holds.
    r.pending = true;
    TRY_VOID(write_text(record_file(d, r.n), record_to_text(r)));
    TRY_VOID(base::fault_point(phase, "record"));
    // The commit: an empty layer dir exchanged with the upper in one rename,
    // so there is always an upper, and the step is whole or absent.
    std::string layer = layer_dir(d, r.n);
    if (!reuse && ::mkdir(layer.c_str(), 0755) != 0) return base::sys_error("creating " + layer);
    // It becomes the upper: the overlay root keeps the mode it had (session::match_root_mode).
    struct stat up_st;
    if (::fstat(up.get(), &up_st) == 0) (void)::chmod(layer.c_str(), up_st.st_mode & 07777);
    TRY_VOID(base::fault_point(phase, "layer"));
    if (::renameat2(AT_FDCWD, upper.c_str(), AT_FDCWD, layer.c_str(), RENAME_EXCHANGE) != 0)
        return base::sys_error("freezing " + upper);
    TRY_VOID(base::fault_point(phase, "renamed"));
    ::unlink((steps_dir(d) + "/live.json").c_str());
    return r.n;
}

}  // namespace steps
