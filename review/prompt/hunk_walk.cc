#include "review/prompt/hunk_walk.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "capture/scan/entry/fingerprint.h"
#include "helper/base/text.h"
#include "review/diff/format.h"
#include "review/diff/merge3.h"
#include "review/diff/pieces.h"
#include "review/diff/source.h"
#include "review/prompt/editor.h"
#include "review/prompt/io.h"
#include "review/prompt/listing.h"
#include "review/prompt/walk_conflicts.h"
#include "review/prompt/walk_rejections.h"

namespace review {

namespace {

constexpr uint64_t kMaxText = kMaxMerge;  // as `layover diff` loads

const char* kHunkHelp =
    "y - apply this hunk\n"
    "n - do not apply this hunk (a session asks why, for the agent)\n"
    "q - quit; apply what was chosen so far, nothing after\n"
    "a - apply this hunk and the rest of this file\n"
    "d - do not apply this hunk or the rest of this file\n"
    "s - split this hunk into smaller hunks (when the question lists s)\n"
    "e - edit this hunk in $EDITOR\n"
    "? - print help\n";
const char* kWholeHelp =
    "y - apply this change\n"
    "n - do not apply this change (a session asks why, for the agent)\n"
    "q - quit; apply what was chosen so far, nothing after\n"
    "? - print help\n";

enum class Fate { Next, Quit, Stop };

// Terminal-safe, line by line (the newlines kept).
std::string safe_lines(const std::string& s) {
    std::string out;
    for (size_t pos = 0; pos < s.size();) {
        size_t nl = s.find('\n', pos);
        size_t end = nl == std::string::npos ? s.size() : nl;
        out += terminal_safe(std::string_view(s).substr(pos, end - pos));
        out += '\n';
        pos = end + 1;
    }
    return out;
}

std::string_view body_of(std::string_view text) {  // a rendered piece's lines without its "@@" line
    size_t nl = text.find('\n');
    return nl == std::string::npos ? std::string_view() : text.substr(nl + 1);
}

struct Walker {
    const capture::Patch& patch;
    const WalkOptions& o;
    WalkResult r;
    std::vector<std::string> declined;  // paths left out
    std::set<std::string, std::less<>> declined_set;

    void decline(const std::string& path) {
        declined.push_back(path);
        declined_set.insert(path);
        partial = true;
    }
    // The path or one of its ancestors is in `set`.
    static bool under(const std::set<std::string, std::less<>>& set, std::string_view path) {
        for (size_t end = path.size(); end != std::string_view::npos && end > 0; end = path.rfind('/', end - 1))
            if (set.count(path.substr(0, end))) return true;
        return false;
    }
    bool partial = false;  // some change left out, or taken in part

    // `n` in a session: a reason asked for, recorded as a rejection once the walk ends.
    WalkRejections rejections{patch, o.session_dir};

    // The content a whole change writes, as its answer's key holds it: a
    // file member's fingerprint (a hard link's, its first name's), "" for
    // none. Without it the key took an agent's other bytes of the same size
    // and mtime for the ones answered (attack25).
    std::string content_of(const capture::Member* m) const {
        if (!m) return "";
        const auto& all = patch.members();
        if (m->kind == capture::Member::Kind::Hardlink)
            for (const auto& x : all)
                if (x.kind == capture::Member::Kind::File && x.path == m->link_target) return content_of(&x);
        if (m->kind != capture::Member::Kind::File) return "";
        return patch.member_fingerprint(static_cast<size_t>(m - all.data()));
    }

    std::string marks(const capture::Change& c) const { return o.risks ? risk_marks(c, *o.risks) : ""; }

    // anew: a change that conflicts (walk_conflicts.h), whose kept answer was
    // given while nothing was in its way: asked again (attack30: a kept y
    // overwrote the target's newer edit under --force, unasked).
    Fate whole(const capture::Change& c, const capture::Member* m, const Side& real, const Side& mine,
               bool anew = false) {
        std::string what = std::string(capture::kind_name(c.kind)) + " " + capture::type_name(c.type);
        if (c.kind == capture::Kind::Deleted) what = std::string("deleted ") + capture::type_name(c.old_type);
        if (c.type == capture::Type::File && c.kind != capture::Kind::Deleted) what += ", " + base::bytes_text(c.size);
        if (c.old_mode != c.mode && c.kind == capture::Kind::Modified) {
            char mb[40];
            std::snprintf(mb, sizeof mb, ", mode %04o -> %04o", c.old_mode & 07777, c.mode & 07777);
            what += mb;
        }
        std::string key = change_key(c, content_of(m));
        std::string was = anew ? "" : saved(key);
        if (was == "y" || was == "n") r.reused++;
        else
            std::fprintf(stderr, "%c  %s  (%s)%s\n", capture::kind_letter(c.kind), base::display_path(c.path).c_str(),
                         what.c_str(), marks(c).c_str());
        for (;;) {
            std::string a = was;
            if (a != "y" && a != "n") {
                std::string ans;
                if (ask("Apply this change [y,n,q,?]? ", &ans) != Input::Line) return Fate::Stop;
                a = normalize_answer(ans);
            }
            if (a == "y") {
                r.answers.given[key] = "y";
                r.only.push_back(only_entry(c.path));
                r.taken++;
                return Fate::Next;
            }
            if (a == "n" || a == "q") {
                decline(c.path);
                if (a == "n") r.answers.given[key] = "n";
                if (a == "n" && was.empty())
                    rejections.reject(c, 0, real, mine.exists ? mine : rejections.session_side(c));
                return a == "q" ? Fate::Quit : Fate::Next;
            }
            std::fputs(kWholeHelp, stderr);
        }
    }

    // The answer kept for `key` from an earlier walk ("" for none).
    std::string saved(const std::string& key) const {
        if (!o.saved) return "";
        auto it = o.saved->given.find(key);
        return it == o.saved->given.end() ? "" : it->second;
    }
    // A hunk's key: its lines without the "@@" line, and which of the file's hunks of those very
    // lines it is (`seen` counts them as they are answered); with its "@@" line when the file has
    // them more than once (`twins`): by rank, a kept "y" to the first went to the second once the
    // agent took the first back (attack27).
    std::map<std::string, size_t> seen, twins;
    std::string piece_key(const capture::Change& c, const FileHunks& f, const Piece& p, bool plain = false) const {
        std::string text = render_piece(f, p);
        std::string_view body = body_of(text);
        std::string key = hunk_key(c.path, body, 0);
        if (auto t = twins.find(key); !plain && t != twins.end() && t->second > 1) return hunk_key(c.path, text, 0);
        auto it = seen.find(key);
        return plain || it == seen.end() ? key : hunk_key(c.path, body, it->second);
    }
    // Records the answer of the piece `key` was made of (its body key next counts one more).
    void answered(const capture::Change& c, const FileHunks& f, const Piece& p, const std::string& key,
                  std::string answer) {
        seen[piece_key(c, f, p, true)]++;
        r.answers.given[key] = std::move(answer);
    }

    // `e`: the piece edited until it applies, or given up (false); the text
    // that applied in edited_text.
    std::string edited_text;
    bool edit(const FileHunks& f, Piece& p) {
        std::string text = hunk_edit_text(render_piece(f, p));
        for (;;) {
            auto edited = edit_text(text, ".diff");
            if (!edited.ok()) {
                std::fprintf(stderr, "layover: %s\n", edited.error().message.c_str());
                return false;
            }
            if (!has_content(*edited)) {
                std::fputs("layover: edit cancelled (the file was empty)\n", stderr);
                return false;
            }
            auto parsed = parse_edited(f, p, *edited);
            if (parsed.ok()) {
                p.edited = *parsed;
                edited_text = *edited;
                return true;
            }
            std::fprintf(stderr, "layover: %s\n", parsed.error().message.c_str());
            std::string yn;
            if (ask("Edit it again? [y/n] ", &yn) != Input::Line || normalize_answer(yn) != "y") return false;
            text = *edited;
        }
    }

    Fate hunks(const capture::Change& c, FileHunks& f, const Side& real, const Side& mine) {
        std::vector<Piece> pieces = hunk_pieces(f);
        std::vector<char> take(pieces.size(), 0);
        for (const auto& p : pieces) twins[piece_key(c, f, p, true)]++;
        Fate fate = Fate::Next;
        bool header = false;  // the diff --git line above shown (not when every answer is reused)
        auto show_header = [&] {
            if (!header)
                std::fprintf(stderr, "diff --git %s %s%s\n", git_quote_two("a/", c.path).c_str(),
                             git_quote_two("b/", c.path).c_str(), marks(c).c_str());
            header = true;
        };
        for (size_t k = 0; k < pieces.size();) {
            bool can_split = !pieces[k].edited && pieces[k].g0 != pieces[k].g1;
            std::string key = piece_key(c, f, pieces[k]);
            std::string was = saved(key);
            if (was == "y" || was == "n" || (was == "s" && can_split) || (was.size() > 1 && was[0] == 'e')) {
                if (was[0] == 'e') {  // the edit kept, when it still applies to this piece
                    auto parsed = parse_edited(f, pieces[k], std::string_view(was).substr(1));
                    if (!parsed.ok()) was.clear();
                    else pieces[k].edited = *parsed;
                }
            } else {
                was.clear();
            }
            if (!was.empty()) {
                r.reused++;
                answered(c, f, pieces[k], key, was);
                if (was == "s") {
                    auto parts = split_piece(f, pieces[k]);
                    for (const auto& p : parts) twins[piece_key(c, f, p, true)]++;
                    pieces.erase(pieces.begin() + static_cast<long>(k));
                    pieces.insert(pieces.begin() + static_cast<long>(k), parts.begin(), parts.end());
                    take.insert(take.begin() + static_cast<long>(k), parts.size() - 1, 0);
                } else {
                    take[k++] = was != "n";
                }
                continue;
            }
            show_header();
            std::fputs(safe_lines(render_piece(f, pieces[k])).c_str(), stderr);
            std::string keys = std::string("y,n,q,a,d") + (can_split ? ",s" : "") + ",e,?";
            std::string ans;
            if (ask("(" + std::to_string(k + 1) + "/" + std::to_string(pieces.size()) + ") Apply this hunk [" + keys +
                        "]? ",
                    &ans) != Input::Line)
                return Fate::Stop;
            std::string a = normalize_answer(ans);
            if (a == "y") {
                answered(c, f, pieces[k], key, "y");
                take[k++] = 1;
            } else if (a == "n") {
                answered(c, f, pieces[k], key, "n");
                if (!pieces[k].split) rejections.reject(c, pieces[k].hunk + 1, real, mine, &f);
                take[k++] = 0;
            } else if (a == "a" || a == "d" || a == "q") {
                for (size_t i = k; i < pieces.size(); i++) {
                    take[i] = a == "a";
                    if (a != "q")
                        answered(c, f, pieces[i], i == k ? key : piece_key(c, f, pieces[i]), a == "a" ? "y" : "n");
                }
                if (a == "q") fate = Fate::Quit;
                break;
            } else if (a == "s" && can_split) {
                answered(c, f, pieces[k], key, "s");
                auto parts = split_piece(f, pieces[k]);
                for (const auto& p : parts) twins[piece_key(c, f, p, true)]++;
                std::fprintf(stderr, "Split into %zu hunks.\n", parts.size());
                pieces.erase(pieces.begin() + static_cast<long>(k));
                pieces.insert(pieces.begin() + static_cast<long>(k), parts.begin(), parts.end());
                take.insert(take.begin() + static_cast<long>(k), parts.size() - 1, 0);
            } else if (a == "e") {
                if (edit(f, pieces[k])) {
                    answered(c, f, pieces[k], key, "e" + edited_text);
                    take[k++] = 1;
                }
            } else {
                std::fputs(kHunkHelp, stderr);
            }
        }
        settle(c, f, pieces, take);
        return fate;
    }

    // The answers for one file as the selection.
    void settle(const capture::Change& c, const FileHunks& f, const std::vector<Piece>& pieces,
                const std::vector<char>& take) {
        std::set<size_t> touched;
        bool all = true, reshaped = false;
        for (size_t k = 0; k < pieces.size(); k++) {
            if (take[k]) touched.insert(pieces[k].hunk + 1);
            all = all && take[k] && !pieces[k].edited;
            reshaped = reshaped || pieces[k].split || pieces[k].edited;
        }
        if (touched.empty()) {
            decline(c.path);
            return;
        }
        r.only.push_back(only_entry(c.path));
        r.taken++;
        if (all) return;
        partial = true;
        HunkChoice& hc = r.hunks[c.path];
        hc.take.assign(touched.begin(), touched.end());
        // A merge's hunks are not the ones apply numbers: the content chosen goes as it is.
        if (!reshaped && !merged) return;
        auto text = apply_pieces(f, pieces, take);
        if (!text.ok()) {  // edits that collide: the file is left out, and said so
            std::fprintf(stderr, "layover: %s left out: %s\n", base::display_path(c.path).c_str(),
                         text.error().message.c_str());
            r.hunks.erase(c.path);
            r.only.pop_back();
            r.taken--;
            decline(c.path);
            return;
        }
        hc.content = std::make_shared<const std::string>(std::move(*text));
        hc.against = capture::fingerprint_bytes(f.old_text);
    }

    // A modified text file that moved on since the patch's base, and that
    // apply would 3-way merge (review/apply/merge.cc; diff shows the same,
    // review/diff/source.cc): the merge, whose hunks are what apply writes
    // (the patch's content would offer hunks undoing the edits made since).
    std::unordered_map<std::string_view, const capture::BaseEntry*> bases;
    std::set<std::string, std::less<>> linked;  // files the patch also adds under another name: never merged
    std::optional<std::string> merged_view(const capture::Change& c, const Side& real, const Side& mine) const {
        auto b = bases.find(c.path);
        if (b == bases.end() || linked.count(c.path)) return std::nullopt;
        const capture::BaseEntry& e = *b->second;
        if (e.stale || e.type != capture::Type::File || real.perm != (e.mode & 07777)) return std::nullopt;
        const std::string* orig = patch.original(e.fingerprint);
        if (!orig || capture::fingerprint_bytes(real.data) == e.fingerprint) return std::nullopt;
        MergeResult m = merge3(*orig, real.data, mine.data);
        if (!m.conflicts.empty()) return std::nullopt;
        return std::move(m.text);
    }
    bool merged = false;  // the file at hand is shown as its merge

    Fate change(const capture::Change& c, const capture::Member* m) {
        rejections.next_change();
        merged = false;
        Side real, mine;
        bool text = c.kind == capture::Kind::Modified && c.type == capture::Type::File &&
                    c.old_type == capture::Type::File && m && m->kind == capture::Member::Kind::File &&
                    m->size <= kMaxText;
        if (text) {
            auto now = patch.read_file(c.path, kMaxText);
            auto rs = read_real_side(o.root, c.path, kMaxText);
            if (!now.ok()) return fail(now.error().message);
            if (!rs.ok()) return fail(rs.error().message);
            real = std::move(*rs);
            mine = Side{true, git_file_mode(c.mode), std::move(*now), true, m->size};
            text = real.exists && real.loaded && real.mode != kGitSymlink && !looks_binary(real.data) &&
                   !looks_binary(mine.data) && real.data != mine.data;
        }
        // apply would refuse it (walk_conflicts.h): said first, then left out or asked about whole.
        if (ConflictStep s = conflict_step(c.path, o); s != ConflictStep::None)
            return s == ConflictStep::Whole ? whole(c, m, real, mine, true) : (decline(c.path), Fate::Next);
        if (!text) return whole(c, m, real, mine);
        FileHunks f;
        std::optional<std::string> view = merged_view(c, real, mine);
        merged = view.has_value();
        diff_file(f, real.data, view ? std::move(*view) : mine.data);
        if (f.spans.empty()) return whole(c, m, real, mine);
        if (merged)
            std::fprintf(stderr,
                         "layover: note: %s changed on the real filesystem since the session's base was recorded; its "
                         "hunks are of what apply will write: the patch's changes merged into its current content\n",
                         base::display_path(c.path).c_str());
        return hunks(c, f, real, mine);
    }

    Fate fail(const std::string& msg) {
        error = msg;
        return Fate::Stop;
    }
    std::string error;

    base::Result<WalkResult> run() {
        std::unordered_map<std::string_view, const capture::Member*> members;
        for (const auto& m : patch.members()) {
            if (m.kind == capture::Member::Kind::File) members.emplace(m.path, &m);
            if (m.kind == capture::Member::Kind::Hardlink) linked.insert(m.link_target);
        }
        for (const auto& b : patch.manifest().base) bases.emplace(b.path, &b);
        size_t walked = 0;
        for (const auto& c : patch.manifest().changes) {
            if (!o.filter.selects(c.path)) continue;
            walked++;
            if (r.quit || under(declined_set, c.path)) {
                decline(c.path);
                continue;
            }
            auto mi = members.find(c.path);
            Fate fate = change(c, mi == members.end() ? nullptr : mi->second);
            if (fate == Fate::Stop) {
                if (!error.empty()) return base::error(error);  // nothing recorded either
                r = WalkResult{};
                r.interrupted = true;
                return r;
            }
            if (fate == Fate::Quit) r.quit = true;
        }
        // Declined paths beneath one taken (a new directory's content) are excluded by name.
        std::set<std::string, std::less<>> taken;
        for (const auto& c : patch.manifest().changes)
            if (!declined_set.count(c.path) && o.filter.selects(c.path)) taken.insert(c.path);
        for (const auto& d : declined)
            if (size_t slash = d.rfind('/');
                slash != std::string::npos && under(taken, std::string_view(d).substr(0, slash)))
                r.exclude.push_back(exclude_entry(d));
        r.all = !partial && o.filter.empty() && walked == patch.manifest().changes.size();
        rejections.record();
        return r;
    }
};

}  // namespace

std::string exclude_entry(const std::string& path) {
    std::string out = "/";
    out.reserve(path.size() + 1);
    for (char ch : path) {
        if (ch == '*' || ch == '?' || ch == '[' || ch == '\\') out.push_back('\\');
        out.push_back(ch);
    }
    return out;
}

std::string only_entry(const std::string& path) { return base::has_glob_chars(path) ? exclude_entry(path) : path; }

base::Result<WalkResult> walk_hunks(const capture::Patch& patch, const WalkOptions& o) {
    Walker w{patch, o, {}, {}, {}, false, {patch, o.session_dir}, {}, {}, {}, {}, {}, false, {}};
    return w.run();
}

}  // namespace review
