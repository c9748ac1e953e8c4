#include "tests/unit/capture_tree.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace testtree {

TempDir::TempDir() {
    char tmpl[] = "/tmp/layover-unit.XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
}

TempDir::~TempDir() {
    std::string cmd = "chmod -R u+rwx '" + path + "' 2>/dev/null; rm -rf '" + path + "'";
    if (std::system(cmd.c_str()) != 0) {
    }
}

void set_xattr(const std::string& path, const std::string& name, const std::string& value) {
    if (::lsetxattr(path.c_str(), name.c_str(), value.data(), value.size(), 0) != 0)
        throw std::runtime_error("setxattr " + name + " on " + path + ": " + std::strerror(errno));
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) throw std::runtime_error("writing " + path);
}

std::string read_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

void make(const std::string& path, const std::string& spec) {
    auto colon = spec.find(':');
    std::string kind = spec.substr(0, colon);
    std::string arg = colon == std::string::npos ? "" : spec.substr(colon + 1);
    int rc = 0;
    if (kind == "file") {
        write_text(path, arg);
    } else if (kind == "dir") {
        rc = ::mkdir(path.c_str(), 0755);
    } else if (kind == "symlink") {
        rc = ::symlink(arg.c_str(), path.c_str());
    } else if (kind == "fifo") {
        rc = ::mkfifo(path.c_str(), 0644);
    } else if (kind == "socket") {
        int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        if (path.size() >= sizeof a.sun_path) throw std::runtime_error("socket path too long: " + path);
        std::strcpy(a.sun_path, path.c_str());
        rc = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
        ::close(s);
    } else if (kind == "whiteout") {
        write_text(path, "");
        set_xattr(path, "user.overlay.whiteout", "y");
    } else if (kind == "opaque") {
        rc = ::mkdir(path.c_str(), 0755);
        if (rc == 0) set_xattr(path, "user.overlay.opaque", "y");
    } else if (kind != "none") {
        throw std::runtime_error("unknown spec " + spec);
    }
    if (rc != 0) throw std::runtime_error("making " + spec + " at " + path + ": " + std::strerror(errno));
}

}  // namespace testtree
