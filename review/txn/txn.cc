#include "review/txn/txn.h"

#include <nlohmann/json.hpp>

#include "helper/base/fs/beneath.h"
#include "helper/base/json/writer.h"
#include "helper/base/text.h"
#include "review/txn/journal.h"

namespace review {

using json = nlohmann::json;

const char* op_name(Op op) {
    switch (op) {
        case Op::Add: return "add";
        case Op::Replace: return "replace";
        case Op::Delete: return "delete";
        case Op::InPlace: return "inplace";
        case Op::Meta: return "meta";
    }
    return "?";
}

namespace {

bool parse_op(const std::string& s, Op* out) {
    for (Op op : {Op::Add, Op::Replace, Op::Delete, Op::InPlace, Op::Meta})
        if (s == op_name(op)) {
            *out = op;
            return true;
        }
    return false;
}

std::string unb64(const json& j, const char* key) {
    std::string out;
    if (!j.contains(key)) return out;
    if (!base::base64_decode(j.at(key).get<std::string>(), &out))
        throw std::runtime_error(std::string("bad base64 in ") + key);
    return out;
}

EntryStat stat_from(const json& j) {
    EntryStat s;
    s.path = unb64(j, "p");
    s.exists = j.at("exists").get<bool>();
    if (!capture::parse_type(j.at("type").get<std::string>(), &s.type)) s.type = capture::Type::None;
    s.mode = j.at("mode").get<uint32_t>();
    s.ino = j.at("ino").get<uint64_t>();
    s.size = j.at("size").get<uint64_t>();
    s.mtime_ns = j.at("mtime_ns").get<int64_t>();
    s.ctime_ns = j.at("ctime_ns").get<int64_t>();
    return s;
}

}  // namespace

namespace {

// The record is written through base::json's writer, not built as a json
// tree: an apply that creates 10,000 files records as many entries in
// after_tree, and a DOM of them costs more than the rest of writing the
// record. txn_from_json (nlohmann) reads it.
void put_str(std::string& o, const std::string& s) { base::json::str(&o, s); }
// Raw byte strings (paths, xattrs) go through base64: JSON strings must be UTF-8.
void put_b64(std::string& o, const std::string& raw) { base::json::str(&o, base::base64_encode(raw)); }

// Appended in place (an apply of 10,000 files writes as many of these):
// the same text as building it from std::to_string pieces, which took ten
// allocations an entry (docs/performance.md, "Apply, third pass").
void put_stat(std::string& o, const EntryStat& s) {
    o += "{\"p\":";
    put_b64(o, s.path);
    o += s.exists ? ",\"exists\":true,\"type\":\"" : ",\"exists\":false,\"type\":\"";
    o += capture::type_name(s.type);  // a fixed lowercase word
    o += "\",\"mode\":";
    base::json::num(&o, s.mode);
    o += ",\"ino\":";
    base::json::num(&o, s.ino);
    o += ",\"size\":";
    base::json::num(&o, s.size);
    o += ",\"mtime_ns\":";
    base::json::num_signed(&o, s.mtime_ns);
    o += ",\"ctime_ns\":";
    base::json::num_signed(&o, s.ctime_ns);
    o += '}';
}

}  // namespace

const char* txn_kind_name(TxnKind k) { return k == TxnKind::Apply ? "apply" : "undo"; }

const char* txn_state_name(TxnState s) {
    switch (s) {
        case TxnState::Staging: return "staging";
        case TxnState::Committing: return "committing";
        case TxnState::Done: return "done";
    }
    return "?";
}

std::string txn_to_json(const Txn& t) {
    std::string o;
    size_t entries = 0;
    for (const auto& u : t.units) entries += 1 + u.after_tree.size();
    o.reserve(512 + entries * 160);
    o += "{\"format\":\"layover-undo/1\",\n\"kind\":";
    put_str(o, txn_kind_name(t.kind));
    o += ",\n\"id\":";
    put_str(o, t.id);
    o += ",\n\"target_b64\":";
    put_b64(o, t.target);
    o += ",\n\"target\":";
    put_str(o, base::display_path(t.target));
    o += ",\n\"dev\":" + std::to_string(t.dev) + ",\n\"ino\":" + std::to_string(t.ino) + ",\n\"state\":";
    put_str(o, txn_state_name(t.state));
    o += ",\n\"source_b64\":";
    put_b64(o, t.source);
    o += ",\n\"created\":";
    put_str(o, t.created);
    if (t.created_ns) o += ",\n\"created_ns\":" + std::to_string(t.created_ns);
    if (t.btime_ns) o += ",\n\"btime_ns\":" + std::to_string(t.btime_ns);
    o += ",\n\"store\":";
    put_str(o, t.store);
    if (t.in_state) o += ",\n\"store_home\":\"state\"";
    o += ",\n\"record_b64\":";
    put_b64(o, t.record);
    if (t.force) o += ",\n\"force\":true";
    o += ",\n\"units\":[";
    for (size_t i = 0; i < t.units.size(); i++) {
        const Unit& u = t.units[i];
        o += i ? ",\n{\"p\":" : "\n{\"p\":";
        put_b64(o, u.path);
        o += ",\"path\":";
        put_str(o, base::display_path(u.path));
        o += ",\"op\":\"";
        o += op_name(u.op);
        o += "\",\"tmp\":";
        put_b64(o, u.tmp);
        o += ",\"slot\":";
        put_str(o, u.slot);
        o += ",\"new_ino\":" + std::to_string(u.new_ino) + ",\"old_ino\":" + std::to_string(u.old_ino) +
             ",\"old_mode\":" + std::to_string(u.old_mode) + ",\"old_mtime_ns\":" + std::to_string(u.old_mtime_ns) +
             ",\"after\":";
        put_stat(o, u.after);
        o += ",\"old_xattrs\":{";
        bool first = true;
        for (const auto& [k, v] : u.old_xattrs) {
            if (!first) o += ',';
            first = false;
            put_b64(o, k);
            o += ':';
            put_b64(o, v);
        }
        o += "},\"after_tree\":[";
        for (size_t k = 0; k < u.after_tree.size(); k++) {
            o += k ? ",\n" : "\n";
            put_stat(o, u.after_tree[k]);
        }
        o += "]}";
    }
    o += "]}\n";
    return o;
}

base::Result<Txn> txn_from_json(const std::string& text) {
    try {
        json j = json::parse(text);
        if (j.at("format").get<std::string>() != "layover-undo/1") return base::error("unknown undo record format");
        Txn t;
        std::string kind = j.at("kind").get<std::string>(), state = j.at("state").get<std::string>();
        if (kind == "apply") t.kind = TxnKind::Apply;
        else if (kind == "undo") t.kind = TxnKind::Undo;
        else return base::error("bad kind in undo record");
        if (state == "staging") t.state = TxnState::Staging;
        else if (state == "committing") t.state = TxnState::Committing;
        else if (state == "done") t.state = TxnState::Done;
        else return base::error("bad state in undo record");
        t.id = j.at("id").get<std::string>();
        t.target = unb64(j, "target_b64");
        t.dev = j.at("dev").get<uint64_t>();
        t.ino = j.at("ino").get<uint64_t>();
        t.source = unb64(j, "source_b64");
        t.created = j.at("created").get<std::string>();
        t.created_ns = j.value("created_ns", int64_t{0});
        t.btime_ns = j.value("btime_ns", int64_t{0});
        t.store = j.at("store").get<std::string>();
        t.record = unb64(j, "record_b64");
        t.force = j.contains("force") && j.at("force").get<bool>();
        t.in_state = j.contains("store_home") && j.at("store_home").get<std::string>() == "state";
        if (!valid_token(t.id) || t.store != store_rel_of(t)) return base::error("bad store in undo record");
        for (const auto& x : j.at("units")) {
            Unit u;
            u.path = unb64(x, "p");
            if (!parse_op(x.at("op").get<std::string>(), &u.op)) return base::error("bad op in undo record");
            u.tmp = unb64(x, "tmp");
            u.slot = x.at("slot").get<std::string>();
            u.new_ino = x.at("new_ino").get<uint64_t>();
            u.old_ino = x.at("old_ino").get<uint64_t>();
            u.old_mode = x.at("old_mode").get<uint32_t>();
            u.old_mtime_ns = x.at("old_mtime_ns").get<int64_t>();
            for (const auto& [k, v] : x.at("old_xattrs").items()) {
                std::string key, val;
                if (!base::base64_decode(k, &key) || !base::base64_decode(v.get<std::string>(), &val))
                    return base::error("bad xattr in undo record");
                u.old_xattrs[key] = val;
            }
            u.after = stat_from(x.at("after"));
            for (const auto& s : x.at("after_tree")) u.after_tree.push_back(stat_from(s));
            // A record lives inside the target: treat every name as hostile.
            if (!safe_relpath(u.path) || is_reserved_path(u.path)) return base::error("unsafe path in undo record");
            if (!u.tmp.empty()) {
                auto [tp, tn] = split_parent(u.tmp);
                if (!safe_relpath(u.tmp) || tp != split_parent(u.path).first || tn.rfind(kTmpPrefix, 0) != 0)
                    return base::error("unsafe staging name in undo record");
            }
            if (!u.slot.empty() && !valid_token(u.slot)) return base::error("unsafe slot in undo record");
            for (const auto& s : u.after_tree)
                if (!safe_relpath(s.path)) return base::error("unsafe path in undo record");
            t.units.push_back(std::move(u));
        }
        return t;
    } catch (const std::exception& e) {
        return base::error(std::string("malformed undo record: ") + e.what());
    }
}

std::string store_rel_of(const Txn& t) {
    if (t.in_state) return "undo/" + target_key(t.dev, t.ino) + "/" + t.id;
    return std::string(kUndoDir) + "/" + t.id;
}

// `.layover-undo` at any depth: a store below the target is the undo store
// of an apply to that dir, and `undo --last` there trusts the newest record
// it holds (found by attack14: a session over a tree forged one below it).
bool is_reserved_path(const std::string& rel) {
    size_t start = 0;
    for (;;) {
        size_t slash = rel.find('/', start);
        std::string_view comp =
            std::string_view(rel).substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        if (comp == kUndoDir || comp.rfind(kTmpPrefix, 0) == 0) return true;
        if (slash == std::string::npos) return false;
        start = slash + 1;
    }
}

bool valid_token(const std::string& s) {
    if (s.empty() || s.size() > 64) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-')) return false;
    return true;
}

}  // namespace review
