#include "helper/sandbox/ipc/control_msg.h"

#include "helper/base/json/reader.h"
#include "helper/base/json/writer.h"
#include "helper/base/text.h"

namespace control {

namespace {

base::Error bad(const std::string& what) { return base::error("malformed control message: " + what); }

constexpr size_t kMaxText = 4096;

// A step number or count: 0..9999.
bool small_number(base::jsonread::Parser& p, int* out) {
    base::jsonread::Number n;
    uint64_t v = 0;
    if (!p.number(&n) || !n.to_unsigned(9999, &v)) return false;
    *out = static_cast<int>(v);
    return true;
}

}  // namespace

std::string encode_request(const Request& r) {
    std::string o = "{";
    base::json::key(&o, "op");
    base::json::str(&o, r.op);
    o += ", ";
    base::json::key(&o, "label");
    base::json::str(&o, r.label);
    if (r.step >= 0) {
        o += ", ";
        base::json::key(&o, "step");
        base::json::num(&o, static_cast<uint64_t>(r.step));
    }
    if (!r.name.empty()) {
        o += ", ";
        base::json::key(&o, "name");
        base::json::str(&o, r.name);
    }
    return o + "}";
}

base::Result<Request> decode_request(std::string_view text) {
    if (text.size() > kMaxMessage) return bad("longer than " + std::to_string(kMaxMessage) + " bytes");
    base::jsonread::Parser p(text);
    Request r;
    if (!p.begin_object()) return bad("not a JSON object");
    std::string_view k;
    while (p.next_key(&k)) {
        if (k == "op") {
            if (!p.string(&r.op)) return bad("\"op\" is not a string");
        } else if (k == "label") {
            if (!p.string(&r.label) || r.label.size() > kMaxText) return bad("\"label\" is not a short string");
        } else if (k == "step") {
            if (!small_number(p, &r.step)) return bad("\"step\" is not 0..9999");
        } else if (k == "name") {
            if (!p.string(&r.name) || !base::valid_session_name(r.name)) return bad("\"name\" is not a session name");
        } else if (!p.skip()) {
            return bad("not JSON");
        }
    }
    if (!p.ok() || !p.finish()) return bad("not JSON");
    if (r.op != "checkpoint" && r.op != "rollback" && r.op != "undo" && r.op != "revert" && r.op != "fork")
        return bad("unknown op (checkpoint, rollback, undo, revert or fork)");
    if ((r.op == "rollback" || r.op == "revert") && r.step < 0) return bad(r.op + " without a \"step\"");
    if (r.op == "revert" && r.step == 0) return bad("revert of step 0 (steps start at 1)");
    if (r.op == "fork" && r.name.empty()) return bad("fork without a \"name\"");
    return r;
}

std::string encode_reply(const Reply& r) {
    std::string o = "{";
    base::json::key(&o, "ok");
    o += r.ok ? "true" : "false";
    o += ", ";
    if (r.ok) {
        base::json::key(&o, "step");
        base::json::num(&o, static_cast<uint64_t>(r.step));
        o += ", ";
        base::json::key(&o, "count");
        base::json::num(&o, static_cast<uint64_t>(r.count));
    } else {
        base::json::key(&o, "error");
        base::json::str(&o, r.error);
    }
    return o + "}";
}

base::Result<Reply> decode_reply(std::string_view text) {
    if (text.size() > kMaxMessage) return bad("longer than " + std::to_string(kMaxMessage) + " bytes");
    base::jsonread::Parser p(text);
    Reply r;
    bool has_ok = false;
    if (!p.begin_object()) return bad("not a JSON object");
    std::string_view k;
    while (p.next_key(&k)) {
        if (k == "ok") {
            if (!p.boolean(&r.ok)) return bad("\"ok\" is not a boolean");
            has_ok = true;
        } else if (k == "step") {
            if (!small_number(p, &r.step)) return bad("\"step\" is not 0..9999");
        } else if (k == "count") {
            if (!small_number(p, &r.count)) return bad("\"count\" is not 0..9999");
        } else if (k == "error") {
            if (!p.string(&r.error) || r.error.size() > kMaxText) return bad("\"error\" is not a short string");
        } else if (!p.skip()) {
            return bad("not JSON");
        }
    }
    if (!p.ok() || !p.finish()) return bad("not JSON");
    if (!has_ok) return bad("no \"ok\"");
    if (!r.ok && r.error.empty()) return bad("a failure without an \"error\"");
    return r;
}

}  // namespace control
