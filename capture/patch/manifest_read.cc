// Reading the manifest: one strict pass over the text straight into
// Change/BaseEntry vectors (json_read.h), with the rules and messages that
// used to be checked on a document tree. Each record's problems are ranked,
// so the one reported is the one the old field-by-field checks met first,
// whatever the order of the keys. The sums list is read by sums_read.cc with
// the same field readers (manifest_fields.h).
#include "capture/patch/manifest.h"
#include "capture/patch/manifest_fields.h"
#include "capture/patch/manifest_steps.h"
#include "capture/patch/writer.h"
#include "capture/scan/entry/xattr.h"
#include "helper/base/cat.h"

namespace capture {

namespace {

using namespace fields;

base::Error bad(const std::string& what) { return base::error("invalid manifest: " + what); }

// "originals": [{"fingerprint", "size"}, ...] (layover-patch/2).
bool read_originals(Parser& p, std::vector<Manifest::Original>* out) {
    if (p.peek() != Tok::Array) {
        p.skip();
        return false;
    }
    bool ok = true;
    p.begin_array();
    while (p.next_item()) {
        if (p.peek() != Tok::Object) {
            p.skip();
            ok = false;
            continue;
        }
        p.begin_object();
        Manifest::Original o;
        Seen seen;
        bool fp = false, size = false;
        std::string_view k;
        while (p.next_key(&k)) {
            if (k == "fingerprint") {
                seen.mark(0, k);
                fp = read_string(p, &o.fingerprint) == Field::Ok;
            } else if (k == "size") {
                seen.mark(1, k);
                size = read_int(p, &o.size);
            } else {
                p.skip();
            }
        }
        if (!fp || !size || !seen.twice.empty()) ok = false;
        out->push_back(std::move(o));
    }
    return ok;
}

// {"name"|"name_b64", "value_b64"} of a change's xattrs list.
bool read_xattr(Parser& p, std::string* name, std::string* value, std::string* scratch) {
    if (p.peek() != Tok::Object) {
        p.skip();
        return false;
    }
    p.begin_object();
    Bytes nb;
    bool has_value = false, value_ok = false;
    std::string_view k;
    while (p.next_key(&k)) {
        if (nb.read(p, k, "name", name)) continue;
        if (k == "value_b64") {
            has_value = true;
            value_ok = read_string(p, scratch) == Field::Ok && base::base64_decode(*scratch, value);
            continue;
        }
        p.skip();
    }
    return nb.get(name) && has_value && value_ok;
}

// One change object (the parser at its value). Semantic problems go to
// *problem (left empty when none); syntax errors stay in the parser.
void read_change(Parser& p, Change* c, std::string* problem) {
    if (p.peek() != Tok::Object) {
        p.skip();
        *problem = "a change is not an object";
        return;
    }
    p.begin_object();
    Bytes path, link;
    Seen seen;
    Problem pr;
    bool has_kind = false, kind_ok = false, xattrs_bad = false;
    std::string scratch, xname, xvalue;
    std::string_view k;
    while (p.next_key(&k)) {
        if (int r = path.read(p, k, "path", &c->path)) seen.mark(r == 1 ? 0 : 11, k);
        else if (int r2 = link.read(p, k, "link_target", &c->link_target)) seen.mark(r2 == 1 ? 1 : 12, k);
        else if (k == "kind") {
            seen.mark(2, k);
            has_kind = true;
            kind_ok = read_string(p, &scratch) == Field::Ok && parse_kind(scratch, &c->kind);
        } else if (k == "type" || k == "old_type") {
            seen.mark(k == "type" ? 3 : 4, k);
            if (!read_type(p, k == "type" ? &c->type : &c->old_type, &scratch)) pr.add(3, "unknown type");
        } else if (k == "size" || k == "mode" || k == "old_mode" || k == "mtime_ns") {
            bool ok = k == "size"       ? (seen.mark(5, k), read_int(p, &c->size))
                      : k == "mode"     ? (seen.mark(6, k), read_int(p, &c->mode))
                      : k == "old_mode" ? (seen.mark(7, k), read_int(p, &c->old_mode))
                                        : (seen.mark(8, k), read_int(p, &c->mtime_ns));
            if (!ok) pr.add(4, "a number field is not an integer that fits");
        } else if (k == "captured") {
            seen.mark(9, k);
            if (!read_bool(p, &c->captured)) pr.add(6, "captured is not a boolean");
        } else if (k == "ignored") {
            seen.mark(11, k);
            if (!read_bool(p, &c->ignored)) pr.add(6, "ignored is not a boolean");
        } else if (k == "xattrs") {
            seen.mark(10, k);
            if (p.peek() != Tok::Array) {
                p.skip();
                pr.add(7, "xattrs is not an array");
                continue;
            }
            p.begin_array();
            while (p.next_item()) {
                if (xattrs_bad) {
                    p.skip();
                } else if (!read_xattr(p, &xname, &xvalue, &scratch)) {
                    pr.add(7, "an invalid xattr");
                    xattrs_bad = true;
                } else if (xname.compare(0, 5, "user.") != 0) {
                    // Same rule as the payload's: a patch carries only user.* xattrs.
                    pr.add(7, "carries xattr " + base::display_path(xname) + "; patches hold only user.* xattrs");
                    xattrs_bad = true;
                } else if (!c->xattrs.emplace(xname, xvalue).second) {
                    pr.add(7, "lists xattr " + base::display_path(xname) + " twice");
                    xattrs_bad = true;
                }
            }
        } else {
            p.skip();
        }
    }
    if (!path.get(&c->path)) {
        *problem = "a change has no valid path";
        return;
    }
    if (!seen.twice.empty()) pr.add(0, "field " + seen.twice + " given twice");
    if (!has_kind || !kind_ok) pr.add(1, "unknown kind");
    if (c->type == Type::Symlink && !link.get(&c->link_target)) pr.add(5, "a symlink without a target");
    if (c->type != Type::Symlink) c->link_target.clear();
    if (!xattrs_bad)
        if (std::string why = xattr_limit_problem(c->xattrs); !why.empty()) pr.add(7, why);
    if (pr.any()) *problem = "change " + base::display_path(c->path) + ": " + pr.what;
}

void read_base(Parser& p, BaseEntry* b, std::string* problem) {
    if (p.peek() != Tok::Object) {
        p.skip();
        *problem = "a base record is not an object";
        return;
    }
    p.begin_object();
    Bytes path;
    Seen seen;
    Problem pr;
    bool absent_bad = false, has_type = false, type_ok = false;
    std::string scratch;
    std::string_view k;
    while (p.next_key(&k)) {
        if (int r = path.read(p, k, "path", &b->path)) {
            seen.mark(r == 1 ? 0 : 7, k);
        } else if (k == "absent") {
            seen.mark(1, k);
            absent_bad = !read_bool(p, &b->absent);
        } else if (k == "type") {
            seen.mark(2, k);
            has_type = true;
            type_ok = read_type(p, &b->type, &scratch) && b->type != Type::None;
        } else if (k == "size" || k == "mode") {
            bool ok = k == "size" ? (seen.mark(3, k), read_int(p, &b->size)) : (seen.mark(4, k), read_int(p, &b->mode));
            if (!ok) pr.add(3, "a number field is not an integer that fits");
        } else if (k == "fingerprint") {
            seen.mark(5, k);
            Tok t = p.peek();
            if (t == Tok::Null) p.null();
            else if (read_string(p, &b->fingerprint) != Field::Ok || b->fingerprint.size() != 32)
                pr.add(4, "bad fingerprint");
        } else if (k == "stale") {
            seen.mark(6, k);
            if (!read_bool(p, &b->stale)) pr.add(5, "stale is not a boolean");
        } else {
            p.skip();
        }
    }
    if (!path.get(&b->path)) {
        *problem = "a base record has no valid path";
        return;
    }
    // Built only for a problem: most records have none.
    auto where = [b] { return "base " + base::display_path(b->path) + ": "; };
    if (!seen.twice.empty()) return void(*problem = where() + "field " + seen.twice + " given twice");
    if (absent_bad) return void(*problem = where() + "absent is not a boolean");
    if (b->absent) {  // nothing else about an absent entry is read
        std::string path_bytes = std::move(b->path);
        *b = BaseEntry();
        b->path = std::move(path_bytes);
        b->absent = true;
        return;
    }
    if (!has_type || !type_ok) pr.add(2, "unknown type");
    if (pr.any()) *problem = where() + pr.what;
}

// The command array: strings, or {"arg", "arg_b64"} objects.
bool read_command(Parser& p, std::vector<std::string>* out) {
    p.begin_array();
    bool ok = true;
    while (p.next_item()) {
        std::string s;
        Tok t = p.peek();
        if (t == Tok::String) {
            p.string(&s);
        } else if (t == Tok::Object) {
            p.begin_object();
            Bytes arg;
            std::string_view k;
            while (p.next_key(&k))
                if (!arg.read(p, k, "arg", &s)) p.skip();
            ok = ok && arg.get(&s);
        } else {
            p.skip();
            ok = false;
        }
        out->push_back(std::move(s));
    }
    return ok;
}

}  // namespace

base::Result<Manifest> manifest_from_text(const std::string& text) {
    Parser p(text);
    if (p.peek() != Tok::Object) return bad("not a JSON object");
    p.begin_object();
    Manifest m;
    // A change takes ~200 bytes of text, its base record ~120: fewer regrowths.
    // Entries take 150-250 bytes of text: reserving too much costs nothing
    // (memory never touched is never faulted in), growing by copies does.
    m.changes.reserve(text.size() / 128);
    m.base.reserve(text.size() / 128);
    Seen seen;
    Problem pr;  // ranks: the order the fields are checked in
    Field format = Field::Absent;
    Bytes target;
    bool has_changes = false, has_base = false;
    std::string_view k;
    while (p.next_key(&k)) {
        if (k == "format") {
            seen.mark(0, k);
            format = read_string(p, &m.format);
        } else if (int r = target.read(p, k, "target", &m.target)) {
            seen.mark(r == 1 ? 1 : 10, k);
        } else if (k == "session" || k == "created" || k == "version" || k == "kind" || k == "undo_store") {
            unsigned bit = k == "session" ? 2 : k == "created" ? 3 : k == "version" ? 4 : k == "kind" ? 5 : 6;
            std::string* out = bit == 2   ? &m.session
                               : bit == 3 ? &m.created
                               : bit == 4 ? &m.version
                               : bit == 5 ? &m.kind
                                          : &m.undo_store;
            seen.mark(bit, k);
            if (read_string(p, out) != Field::Ok) pr.add(2, std::string(k) + " is not a string");
        } else if (k == "ignored") {
            seen.mark(11, k);
            if (!read_int(p, &m.ignored)) pr.add(2, "ignored is not a count");
        } else if (k == "originals") {
            seen.mark(12, k);
            if (!read_originals(p, &m.originals)) pr.add(3, "originals is not a list of {fingerprint, size}");
        } else if (k == "steps") {
            seen.mark(13, k);
            // A bad record stops the read there: the parser is inside it.
            auto recs = steps_from_manifest(p);
            if (!recs) return bad(recs.error().message);
            m.steps = std::move(recs.value());
        } else if (k == "command") {
            seen.mark(7, k);
            if (p.peek() != Tok::Array) {
                p.skip();
                pr.add(3, "command is not an array");
            } else if (!read_command(p, &m.command)) {
                pr.add(3, "an invalid command argument");
            }
        } else if (k == "changes" || k == "base") {
            bool changes = k == "changes";
            seen.mark(changes ? 8 : 9, k);
            if (p.peek() != Tok::Array) {
                p.skip();
                continue;
            }
            (changes ? has_changes : has_base) = true;
            int rank = changes ? 4 : 5;
            std::string problem;
            p.begin_array();
            while (p.next_item()) {
                if (changes) {
                    Change c;
                    read_change(p, &c, &problem);
                    m.changes.push_back(std::move(c));
                } else {
                    BaseEntry b;
                    read_base(p, &b, &problem);
                    m.base.push_back(std::move(b));
                }
                if (!problem.empty()) {
                    pr.add(rank, std::move(problem));
                    problem.clear();
                }
            }
        } else {
            p.skip();
        }
    }
    if (!p.ok() || !p.finish()) return bad("not valid JSON (at byte " + std::to_string(p.pos()) + ")");
    if (format != Field::Ok) return bad("no format field");
    if (m.format != "layover-patch/1" && m.format != "layover-patch/2" && m.format != "layover-patch/3")
        return base::error("unsupported patch format '" + base::display_path(m.format) +
                           "'; this layover reads layover-patch/1, /2 and /3, upgrade layover");
    if (m.format == "layover-patch/1" && !m.originals.empty())
        return bad("originals are a layover-patch/2 and /3 field, the patch says layover-patch/1");
    if (!seen.twice.empty()) return bad("field " + seen.twice + " given twice");
    if (!target.get(&m.target)) return bad("no target");
    if (!has_changes) pr.add(4, "no changes array");
    if (!has_base) pr.add(5, "no base array");
    if (pr.any()) return bad(pr.what);
    return m;
}

}  // namespace capture
