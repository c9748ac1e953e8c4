// Rollback of a kept session and its undo (docs/history.md).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "helper/base/dir.h"
#include "helper/base/fd.h"
#include "helper/base/fs/beneath.h"
#include "helper/store/steps.h"

namespace steps {

namespace {

bool exists(const std::string& p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0;
}

base::Result<void> move(const std::string& from, const std::string& to) {
    if (::rename(from.c_str(), to.c_str()) != 0) return base::sys_error("moving " + from + " to " + to);
    return base::Ok();
}

base::Result<void> remove_dir(const std::string& p) {
    if (!exists(p)) return base::Ok();
    auto slash = p.rfind('/');
    base::Fd parent(::open(p.substr(0, slash).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!parent.valid()) return base::sys_error("opening " + p.substr(0, slash));
    return review::remove_tree_at(parent.get(), p.substr(slash + 1));
}

base::Result<bool> upper_empty(const std::string& d) {
    TRY(base::Fd up, base::open_at(AT_FDCWD, d + "/upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    TRY(auto names, base::list_dir(up.get()));
    return names.empty();
}

std::string name4(int n) {
    char b[16];
    std::snprintf(b, sizeof b, "%04d", n);
    return b;
}

}  // namespace

std::string rolled_back_dir(const std::string& d) { return d + "/rolled-back"; }

base::Result<void> fork_steps(const std::string& from, const std::string& to, int at) {
    if (::mkdir(to.c_str(), 0700) != 0) return base::sys_error("creating " + to);
    if (::mkdir((to + "/upper").c_str(), 0755) != 0) return base::sys_error("creating " + to + "/upper");
    if (at == 0) return base::Ok();
    if (::mkdir(steps_dir(to).c_str(), 0700) != 0) return base::sys_error("creating " + steps_dir(to));
    for (int i = 1; i <= at; i++) {
        TRY_VOID(copy_layer(layer_dir(from, i), layer_dir(to, i)));
        auto text = base::open_at(AT_FDCWD, record_file(from, i), O_RDONLY | O_NOFOLLOW);
        if (!text) continue;  // a step without a record stays one
        TRY(std::string body, base::read_all(text->get(), 64u << 20));
        TRY(base::Fd out, base::open_at(AT_FDCWD, record_file(to, i), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600));
        TRY_VOID(base::write_all(out.get(), body.data(), body.size()));
    }
    return base::Ok();
}

base::Result<int> rollback(const std::string& d, int n) {
    TRY(int total, count(d));
    if (n < 0 || n > total)
        return base::error("no step " + std::to_string(n) + ": the session has steps 1.." + std::to_string(total) +
                           " (0 is the real tree alone); see 'layover log'");
    TRY(bool empty, upper_empty(d));
    if (n == total && empty) return 0;
    std::string rb = rolled_back_dir(d), tmp = rb + ".new";
    TRY_VOID(remove_dir(tmp));
    if (::mkdir(tmp.c_str(), 0700) != 0) return base::sys_error("creating " + tmp);
    {
        TRY(base::Fd f, base::open_at(AT_FDCWD, tmp + "/at", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600));
        std::string at = std::to_string(n) + "\n";
        TRY_VOID(base::write_all(f.get(), at.data(), at.size()));
    }
    // Live upper first, then the steps from the top: each move leaves a valid stack.
    TRY_VOID(move(d + "/upper", tmp + "/upper"));
    if (::mkdir((d + "/upper").c_str(), 0755) != 0) return base::sys_error("creating a fresh upper layer");
    for (int i = total; i > n; i--) {
        if (exists(record_file(d, i))) TRY_VOID(move(record_file(d, i), tmp + "/" + name4(i) + ".json"));
        TRY_VOID(move(layer_dir(d, i), tmp + "/" + name4(i)));
    }
    TRY_VOID(remove_dir(rb));
    TRY_VOID(move(tmp, rb));
    return total - n;
}

base::Result<int> rollback_undo(const std::string& d) {
    std::string rb = rolled_back_dir(d);
    if (!exists(rb)) return base::error("nothing to undo: no rollback is kept for this session");
    TRY(base::Fd f, base::open_at(AT_FDCWD, rb + "/at", O_RDONLY | O_NOFOLLOW));
    TRY(std::string at, base::read_all(f.get(), 32));
    int n = std::atoi(at.c_str());
    TRY(int total, count(d));
    TRY(bool empty, upper_empty(d));
    if (total != n || !empty)
        return base::error("the session changed since the rollback to step " + std::to_string(n) +
                           " (it has steps 1.." + std::to_string(total) + (empty ? "" : " and live changes") +
                           "); roll back to step " + std::to_string(n) + " first, or keep it as it is");
    int moved = 0;
    for (int i = n + 1; exists(rb + "/" + name4(i)); i++, moved++) {
        TRY_VOID(move(rb + "/" + name4(i), layer_dir(d, i)));
        if (exists(rb + "/" + name4(i) + ".json")) TRY_VOID(move(rb + "/" + name4(i) + ".json", record_file(d, i)));
    }
    if (exists(rb + "/upper")) {
        if (::rmdir((d + "/upper").c_str()) != 0) return base::sys_error("replacing the empty upper layer");
        TRY_VOID(move(rb + "/upper", d + "/upper"));
    }
    TRY_VOID(remove_dir(rb));
    return moved;
}

}  // namespace steps
