#include "helper/store/layers/layer_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "helper/base/dir.h"
#include "helper/base/fault.h"
#include "helper/base/fs/replace_file.h"
#include "helper/base/text.h"
#include "helper/store/layers/steps.h"

namespace steps {

namespace {

std::string four(int n) {
    char b[16];
    std::snprintf(b, sizeof b, "%04d", n);
    return b;
}

std::string parent_of(const std::string& p) {
    auto slash = p.rfind('/');
    return slash == std::string::npos || slash == 0 ? "/" : p.substr(0, slash);
}

base::Result<std::string> new_id() {
    unsigned char b[16];
    if (::getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) return base::sys_error("making a layer id");
    return base::to_hex(std::string_view(reinterpret_cast<const char*>(b), sizeof b));
}

base::Result<void> make_store(const std::string& store) {
    if (::mkdir(store.c_str(), 0700) != 0 && errno != EEXIST) return base::sys_error("creating " + store);
    if (!base::is_real_dir(store)) return base::error(store + " is not a directory; remove it");
    return base::Ok();
}

}  // namespace

base::Result<void> replace_file(const std::string& path, const std::string& text) {
    return base::replace_file(path, path + ".tmp", text, "writing " + path);
}

std::string store_dir(const std::string& session_dir) { return parent_of(parent_of(session_dir)) + "/layers"; }

bool valid_layer_id(const std::string& id) {
    return id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

base::Result<std::string> read_ref(const std::string& ref) {
    TRY(base::Fd fd, base::open_at(AT_FDCWD, ref, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
    TRY(std::string id, base::read_all(fd.get(), 64));
    if (!id.empty() && id.back() == '\n') id.pop_back();
    if (!valid_layer_id(id)) return base::error("layer reference " + ref + " does not hold a layer id; remove it");
    return id;
}

bool holds_layer(const std::string& container, int n) {
    struct stat st;
    std::string base = container + "/" + four(n);
    return ::lstat(base.c_str(), &st) == 0 || ::lstat((base + ".ref").c_str(), &st) == 0;
}

base::Result<std::string> resolve_in(const std::string& d, const std::string& container, int n) {
    std::string dir = container + "/" + four(n);
    if (base::is_real_dir(dir)) return dir;
    TRY(std::string id, read_ref(dir + ".ref"));
    std::string layer = store_dir(d) + "/" + id;
    if (!base::is_real_dir(store_dir(d)) || !base::is_real_dir(layer))
        return base::error("step " + std::to_string(n) + "'s layer " + id + " is missing from " + store_dir(d) +
                           " ('layover doctor' lists what is broken)");
    return layer;
}

base::Result<std::string> layer_path(const std::string& d, int n) { return resolve_in(d, steps_dir(d), n); }

base::Result<base::Fd> open_layer(const std::string& d, int n) {
    // A real dir NNNN wins (resolve_in): open it straight, without a stat first.
    int fd = ::open((steps_dir(d) + "/" + four(n)).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) return base::Fd(fd);
    TRY(std::string p, layer_path(d, n));
    return base::open_at(AT_FDCWD, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

base::Result<void> share(const std::string& d, const std::string& container, int n) {
    std::string dir = container + "/" + four(n);
    if (!holds_layer(container, n)) return base::Ok();  // a squashed step: no layer
    if (!base::is_real_dir(dir)) {
        TRY(std::string id, read_ref(dir + ".ref"));
        (void)id;
        return base::Ok();
    }
    std::string store = store_dir(d);
    TRY_VOID(make_store(store));
    TRY(std::string id, new_id());
    TRY_VOID(replace_file(dir + ".ref", id + "\n"));
    TRY_VOID(base::fault_point("share", "ref"));
    if (::rename(dir.c_str(), (store + "/" + id).c_str()) != 0)
        return base::sys_error("moving " + dir + " into the layer store " + store);
    return base::fault_point("share", "moved");
}

base::Result<void> copy_ref(const std::string& from, const std::string& to, int n) {
    if (holds_layer(from, n)) {  // else a squashed step: its record alone
        TRY(std::string id, read_ref(from + "/" + four(n) + ".ref"));
        TRY_VOID(replace_file(to + "/" + four(n) + ".ref", id + "\n"));
    }
    // The record is hard-linked (O(1) whatever the paths it lists): records
    // are only ever replaced (temp + rename), never written in place.
    std::string rec = from + "/" + four(n) + ".json", dst = to + "/" + four(n) + ".json";
    struct stat st;
    if (::lstat(rec.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return base::Ok();  // a step without a record stays one
    ::unlink(dst.c_str());
    if (::link(rec.c_str(), dst.c_str()) != 0) return base::sys_error("linking the record " + rec);
    return base::Ok();
}

base::Result<base::Fd> lock_store(const std::string& store, bool exclusive) {
    TRY_VOID(make_store(store));
    TRY(base::Fd fd, base::open_at(AT_FDCWD, store + "/.lock", O_RDWR | O_CREAT | O_NOFOLLOW, 0600));
    if (::flock(fd.get(), exclusive ? LOCK_EX : LOCK_SH) != 0) return base::sys_error("locking " + store);
    return fd;
}

}  // namespace steps
