#include "helper/base/passwd.h"

#include <fcntl.h>

#include "helper/base/fd.h"

namespace base {

std::string passwd_home(std::string_view passwd, unsigned uid) {
    const std::string want = std::to_string(uid);
    while (!passwd.empty()) {
        size_t end = passwd.find('\n');
        std::string_view line = passwd.substr(0, end);
        passwd = end == std::string_view::npos ? std::string_view() : passwd.substr(end + 1);
        // name:password:uid:gid:gecos:home:shell, split up to the home: a
        // line of millions of ':' made as many fields (attack22).
        std::string_view f[6];
        size_t n = 0;
        for (size_t a = 0; n < 6;) {
            size_t b = line.find(':', a);
            f[n++] = line.substr(a, b == std::string_view::npos ? std::string_view::npos : b - a);
            if (b == std::string_view::npos) break;
            a = b + 1;
        }
        if (n == 6 && f[2] == want && !f[5].empty() && f[5][0] == '/') return std::string(f[5]);
    }
    return "";
}

std::string passwd_file_home(unsigned uid) {
    auto f = open_at(AT_FDCWD, "/etc/passwd", O_RDONLY | O_CLOEXEC);
    if (!f) return "";
    auto text = read_all(f->get(), 16 << 20);
    return text ? passwd_home(text.value(), uid) : "";
}

}  // namespace base
