#include "helper/cli/patch/patch_out.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>

#include "helper/base/text.h"

namespace cli {

std::string other_file_at(const std::string& out) {
    struct stat st {};
    if (::stat(out.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return "";
    FILE* f = std::fopen(out.c_str(), "rb");
    if (!f) return "";  // the save's own open names the error
    unsigned char magic[4] = {};
    size_t n = std::fread(magic, 1, sizeof magic, f);
    std::fclose(f);
    static const unsigned char kZstd[4] = {0x28, 0xb5, 0x2f, 0xfd};
    if (n == sizeof magic && std::memcmp(magic, kZstd, sizeof magic) == 0) return "";
    return base::display_path(out) +
           " exists and is not a layover patch; nothing was written: pick another FILE.tar.zst, or remove that file "
           "first";
}

}  // namespace cli
