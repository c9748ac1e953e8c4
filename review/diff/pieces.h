// The hunks `apply -p` offers (pure): one file's diff as pieces a person
// takes or leaves, split smaller (`s`, at unchanged lines between changes,
// as git add -p does) or edited (`e`), and the text with the taken pieces
// applied. The unsplit pieces are the hunks `layover diff` numbers.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "helper/base/result.h"
#include "review/diff/hunks.h"

namespace review {

// One file's two texts and their diff; the views point into the texts.
struct FileHunks {
    std::string old_text, new_text;  // the real file now, the patch's new content
    std::vector<std::string_view> a, b;
    LineDiff d;
    std::vector<Group> groups;
    std::vector<HunkSpan> spans;  // the diff's hunks
};
// Diffs the texts (kHunkContext). Not copyable: the views point into it.
void diff_file(FileHunks& f, std::string old_text, std::string new_text);

struct Piece {
    size_t hunk = 0;                    // the diff hunk it is (part of), 0-based: numbered hunk+1
    size_t g0 = 0, g1 = 0;              // change groups it covers
    size_t a0, a1, b0, b1;              // lines shown, context included
    bool split = false;                 // a part of its hunk
    std::optional<std::string> edited;  // after `e`: the text replacing old lines [a0, a1)
};

// The diff's hunks, one piece each.
std::vector<Piece> hunk_pieces(const FileHunks& f);

// `s`: one piece per change group, with up to kHunkContext lines of context
// each side that stay within the piece (neighbours may share them). A piece
// of one group (or an edited one) does not split: returns it alone.
std::vector<Piece> split_piece(const FileHunks& f, const Piece& p);

// The piece as a unified-diff hunk: "@@ -l,s +l,s @@" and its lines (raw
// bytes: the caller makes them terminal-safe), as it was before any edit.
std::string render_piece(const FileHunks& f, const Piece& p);

// `e`: the edited hunk text back. Lines starting with '#' or "@@ " are dropped, an
// empty line is an empty context line, "\ No newline" ends the line before
// without one. Its context and '-' lines must be the piece's old lines as they
// are; else an error saying so. Returns the text replacing old lines [a0, a1).
base::Result<std::string> parse_edited(const FileHunks& f, const Piece& p, std::string_view edited);

// The old text with the taken pieces applied (take[i] for pieces[i]); an
// edited piece whose changed lines reach into another taken piece is an error.
base::Result<std::string> apply_pieces(const FileHunks& f, const std::vector<Piece>& pieces,
                                       const std::vector<char>& take);

}  // namespace review
