#include "review/prompt/rejected.h"

#include "capture/scan/entry/fingerprint.h"
#include "helper/base/text.h"
#include "review/diff/algo.h"
#include "review/diff/hunks.h"

namespace review {

namespace {

void add_field(std::string* s, std::string_view f) {
    *s += std::to_string(f.size());
    *s += ':';
    s->append(f);
}

const capture::Change* find_change(const std::vector<capture::Change>& changes, const std::string& path) {
    for (const auto& c : changes)
        if (c.path == path) return &c;
    return nullptr;
}

base::Error no_such_hunk(const std::string& path, size_t have, size_t hunk) {
    return base::error(base::display_path(path) + " has " + std::to_string(have) + " hunk" + (have == 1 ? "" : "s") +
                       ", no hunk " + std::to_string(hunk) + "; see 'layover diff NAME --hunk-numbers -- PATH'");
}

}  // namespace

std::string change_fingerprint(const capture::Change& c, const Side& session) {
    std::string s;
    add_field(&s, capture::kind_name(c.kind));
    add_field(&s, capture::type_name(c.type));
    add_field(&s, std::to_string(c.mode & 0777));
    add_field(&s, c.link_target);
    if (!session.exists) add_field(&s, "-");
    else if (!session.loaded) add_field(&s, "size " + std::to_string(session.size));
    else add_field(&s, capture::fingerprint_bytes(session.data));
    return capture::fingerprint_bytes(s);
}

std::vector<std::string> hunk_fingerprints(std::string_view real, std::string_view session) {
    auto a = split_lines(real), b = split_lines(session);
    auto groups = groups_of(diff_lines(a, b));
    return hunk_fingerprints(a, b, groups, hunk_spans(groups, a.size(), kHunkContext));
}

std::vector<std::string> hunk_fingerprints(const std::vector<std::string_view>& a,
                                           const std::vector<std::string_view>& b, const std::vector<Group>& groups,
                                           const std::vector<HunkSpan>& spans) {
    std::vector<std::string> out;
    for (const auto& h : spans) {
        std::string s;
        for (size_t i = groups[h.g0].a0; i < groups[h.g1].a1; i++) add_field(&s, a[i]);
        s += '|';
        for (size_t i = groups[h.g0].b0; i < groups[h.g1].b1; i++) add_field(&s, b[i]);
        out.push_back(capture::fingerprint_bytes(s));
    }
    return out;
}

std::string why_no_hunks(const capture::Change& c, const Side& real, const Side& session) {
    if (c.kind != capture::Kind::Modified || c.type != capture::Type::File || c.old_type != capture::Type::File)
        return std::string("it is ") + capture::kind_name(c.kind) + ", not a modified file";
    if (!real.exists || real.mode == kGitSymlink || !session.exists || session.mode == kGitSymlink)
        return "it is not a regular file on both sides";
    if (!real.loaded || !session.loaded) return "it is too large to diff";
    if (looks_binary(real.data) || looks_binary(session.data)) return "it is binary";
    return "";
}

base::Result<std::vector<RejectionState>> judge_rejections(const std::vector<session::Rejection>& recs,
                                                           const std::vector<capture::Change>& changes,
                                                           const SideOf& session_side, const SideOf& real_side) {
    std::vector<RejectionState> out;
    for (const auto& r : recs) {
        RejectionState st;
        st.rec = r;
        const capture::Change* c = find_change(changes, r.path);
        if (!c) {
            st.why = "no longer a change";
            out.push_back(std::move(st));
            continue;
        }
        TRY(Side now, session_side(r.path));
        if (change_fingerprint(*c, now) != r.fingerprint) {
            st.why = "changed since";
        } else if (r.hunk == 0) {
            st.in_force = true;
        } else {
            TRY(Side real, real_side(r.path));
            if (why_no_hunks(*c, real, now).empty()) {
                auto fps = hunk_fingerprints(real.data, now.data);
                for (size_t i = 0; i < fps.size() && !st.in_force; i++)
                    if (fps[i] == r.hunk_fingerprint) {
                        st.in_force = true;
                        st.hunk_now = i + 1;
                    }
            }
            if (!st.in_force) st.why = "no longer in the diff";
        }
        out.push_back(std::move(st));
    }
    return out;
}

base::Result<session::Rejection> make_rejection(const std::string& path, size_t hunk, const std::string& reason,
                                                const std::string& time, const std::vector<capture::Change>& changes,
                                                const SideOf& session_side, const SideOf& real_side,
                                                const ChangePrints* prints) {
    const capture::Change* c = find_change(changes, path);
    if (!c) return base::error(base::display_path(path) + " is not a change of this session");
    if (std::string why = session::reason_problem(reason); !why.empty())
        return base::error("the reason is " + why + "; give one short line with -m");
    session::Rejection r;
    r.path = path;
    r.reason = reason;
    r.time = time;
    if (prints) {  // taken by the caller for this change: no re-reading, no re-diffing
        r.fingerprint = prints->change;
        if (hunk == 0) return r;
        if (hunk > prints->hunks.size()) return no_such_hunk(path, prints->hunks.size(), hunk);
        r.hunk = static_cast<uint32_t>(hunk);
        r.hunk_fingerprint = prints->hunks[hunk - 1];
        return r;
    }
    TRY(Side now, session_side(path));
    r.fingerprint = change_fingerprint(*c, now);
    if (hunk == 0) return r;
    TRY(Side real, real_side(path));
    if (std::string why = why_no_hunks(*c, real, now); !why.empty())
        return base::error(base::display_path(path) + " has no hunks (" + why +
                           "); reject it whole: drop ':" + std::to_string(hunk) + "'");
    auto fps = hunk_fingerprints(real.data, now.data);
    if (hunk > fps.size()) return no_such_hunk(path, fps.size(), hunk);
    r.hunk = static_cast<uint32_t>(hunk);
    r.hunk_fingerprint = fps[hunk - 1];
    return r;
}

std::string rejection_line(const RejectionState& s) {
    std::string line = base::display_path(s.rec.path);
    size_t n = s.in_force && s.rec.hunk ? s.hunk_now : s.rec.hunk;
    if (n) line += " [hunk " + std::to_string(n) + "]";
    line += " rejected";
    if (!s.in_force) line += " (superseded: " + s.why + ")";
    if (!s.rec.reason.empty()) line += ": " + terminal_safe(s.rec.reason);
    return line;
}

}  // namespace review
