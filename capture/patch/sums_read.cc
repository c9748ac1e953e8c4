// Reading the sums list (layover-sums/1): the members' paths and
// fingerprints, strictly, with manifest_fields.h's readers.
#include "capture/patch/manifest.h"
#include "capture/patch/manifest_fields.h"
#include "capture/patch/writer.h"
#include "helper/base/cat.h"

namespace capture {

using namespace fields;

base::Result<std::vector<std::pair<std::string, std::string>>> sums_from_text(const std::string& text) {
    auto invalid_list = [] { return base::error(base::cat({kSumsName, " is not a valid sums list"})); };
    Parser p(text);
    if (p.peek() != Tok::Object) return invalid_list();
    p.begin_object();
    Seen seen;
    Field format = Field::Absent;
    std::string fmt;
    bool has_members = false, entry_bad = false;
    std::vector<std::pair<std::string, std::string>> out;
    std::string_view k;
    while (p.next_key(&k)) {
        if (k == "format") {
            seen.mark(0, k);
            format = read_string(p, &fmt);
        } else if (k == "members") {
            seen.mark(1, k);
            if (p.peek() != Tok::Array) {
                p.skip();
                continue;
            }
            has_members = true;
            p.begin_array();
            while (p.next_item()) {
                if (entry_bad || p.peek() != Tok::Object) {
                    p.skip();
                    entry_bad = true;
                    continue;
                }
                p.begin_object();
                Bytes path;
                Seen entry_seen;
                std::pair<std::string, std::string> e;
                Field fp = Field::Absent;
                std::string_view ek;
                while (p.next_key(&ek)) {
                    if (int r = path.read(p, ek, "path", &e.first)) {
                        entry_seen.mark(r == 1 ? 0 : 2, ek);
                    } else if (ek == "fingerprint") {
                        entry_seen.mark(1, ek);
                        fp = read_string(p, &e.second);
                    } else {
                        p.skip();
                    }
                }
                if (!path.get(&e.first) || fp != Field::Ok || !entry_seen.twice.empty()) entry_bad = true;
                else out.push_back(std::move(e));
            }
        } else {
            p.skip();
        }
    }
    if (!p.ok() || !p.finish() || format != Field::Ok || fmt != "layover-sums/1" || !has_members || !seen.twice.empty())
        return invalid_list();
    if (entry_bad) return base::error(base::cat({kSumsName, " has an invalid entry"}));
    return out;
}

}  // namespace capture
