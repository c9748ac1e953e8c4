#include "review/prompt/editor.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "helper/base/fd.h"

namespace review {

std::string hunk_edit_text(const std::string& rendered) {
    return "# Manual hunk edit mode (layover apply -p)\n" + rendered +
           "# ---\n"
           "# To leave a '-' line as it is, make it a ' ' line (context).\n"
           "# To leave out a '+' line, delete it.\n"
           "# Lines starting with # are removed. Emptying the file cancels the edit.\n";
}

bool has_content(const std::string& text) {
    for (size_t pos = 0; pos < text.size();) {
        size_t nl = text.find('\n', pos);
        std::string_view l = std::string_view(text).substr(pos, nl == std::string::npos ? nl : nl - pos);
        if (!l.empty() && l[0] != '#') return true;
        pos = nl == std::string::npos ? text.size() : nl + 1;
    }
    return false;
}

base::Result<std::string> edit_text(const std::string& text, const std::string& suffix) {
    const char* tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp && tmp[0] == '/' ? tmp : "/tmp") + "/layover-edit-XXXXXX" + suffix;
    std::string buf = path;
    int fd = ::mkostemps(buf.data(), static_cast<int>(suffix.size()), O_CLOEXEC);
    if (fd < 0) return base::error("cannot make a temp file for the editor: " + std::string(std::strerror(errno)));
    path = buf;
    struct Remove {
        std::string p;
        ~Remove() { ::unlink(p.c_str()); }
    } remove{path};
    {
        base::Fd f(fd);
        TRY_VOID(base::write_all(f.get(), text.data(), text.size()));
    }
    const char* ed = std::getenv("VISUAL");
    if (!ed || !*ed) ed = std::getenv("EDITOR");
    std::string editor = ed && *ed ? ed : "vi";
    pid_t pid = ::fork();
    if (pid < 0) return base::error("cannot start the editor: " + std::string(std::strerror(errno)));
    if (pid == 0) {
        ::execl("/bin/sh", "sh", "-c", (editor + " \"$1\"").c_str(), "sh", path.c_str(), (char*)nullptr);
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return base::error("the editor '" + editor + "' failed (status " +
                           std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) +
                           "); set $EDITOR to one that works");
    base::Fd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (in.get() < 0) return base::error("cannot read the edited hunk back: " + std::string(std::strerror(errno)));
    return base::read_all(in.get(), 64ull << 20);
}

}  // namespace review
