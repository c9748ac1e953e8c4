// git's --stat and --name-status renderings of rendered files (pure).
#pragma once
#include <string>
#include <vector>

#include "review/diff/format.h"

namespace review {

// width: total columns (git uses 80 off a terminal, else the terminal's width).
// Names are shown as status shows them (base::display_path: "é.txt", not
// git's "\303\251.txt"); --name-status keeps git's quoting, for scripts.
std::string render_stat(const std::vector<FileStat>& files, int width, bool color);
std::string render_name_status(const std::vector<FileStat>& files);

}  // namespace review
