#include "helper/store/session/layer_gc.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>

#include "helper/base/dir.h"
#include "helper/base/fd.h"
#include "helper/base/fs/beneath.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/steps.h"
#include "helper/store/records/usage.h"
#include "helper/store/session/session.h"

namespace steps {

namespace {

bool exists(const std::string& p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0;
}

std::vector<std::string> names_in(const std::string& dir) {
    std::vector<std::string> out;
    base::Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) return out;
    auto names = base::list_dir(fd.get());
    if (names)
        for (auto& e : names.value()) out.push_back(std::move(e.name));
    return out;
}

// "0003.ref" -> 3, "0003" -> 3 (with suffix ""), else 0.
int number_of(const std::string& n, const char* suffix) {
    std::string s = suffix;
    if (n.size() != 4 + s.size() || n.compare(4, s.size(), s) != 0) return 0;
    if (n.substr(0, 4).find_first_not_of("0123456789") != std::string::npos) return 0;
    return std::atoi(n.substr(0, 4).c_str());
}

std::string four(int n) {
    char b[16];
    std::snprintf(b, sizeof b, "%04d", n);
    return b;
}

}  // namespace

uint64_t layer_usage(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? 0 : session::tree_usage(fd).bytes;
}

std::vector<Problem> check_history(const std::string& d, bool fix) {
    std::vector<Problem> out;
    if (exists(d + "/stack-op") || exists(d + "/steps.rb") || exists(d + "/rolled-back.new") ||
        exists(d + "/steps.gone")) {
        if (!fix) {
            out.push_back({"an interrupted rollback or undo (a rerun finishes it too)"});
        } else {
            auto r = finish_pending(d);
            if (r) out.push_back({r.value()});
            else out.push_back({"could not finish an interrupted rollback: " + r.error().message, false});
        }
    }
    std::string steps = steps_dir(d);
    auto names = names_in(steps);
    bool has_steps = false;
    for (const auto& n : names) has_steps |= number_of(n, "") > 0 || number_of(n, ".ref") > 0;
    if (has_steps && !exists(d + "/upper")) {
        out.push_back({fix ? "made the missing live upper (a freeze was killed after its rename)"
                           : "the live upper is missing (a freeze was killed after its rename)"});
        if (fix) (void)::mkdir((d + "/upper").c_str(), 0755);
    }
    for (const auto& n : names) {
        if (int i = number_of(n, ".ref"); i && exists(steps + "/" + four(i))) {
            out.push_back({std::string(fix ? "removed" : "found") + " the reference " + n +
                           " beside its layer dir (a move into the layer store was killed)"});
            if (fix) ::unlink((steps + "/" + n).c_str());
        }
        if (int i = number_of(n, ".json"); i && !holds_layer(steps, i)) {
            out.push_back({std::string(fix ? "removed" : "found") + " the record " + n +
                           " without its layer (a freeze was killed before its rename)"});
            if (fix) ::unlink((steps + "/" + n).c_str());
        }
    }
    auto total = count(d);
    if (!total) {
        out.push_back({"its steps are unreadable: " + total.error().message, false});
        return out;
    }
    auto first = first_layer(d);
    for (int i = first ? first.value() : 1; i <= total.value(); i++)
        if (auto p = layer_path(d, i); !p) out.push_back({p.error().message, false});
    return out;
}

std::set<std::string> referenced_layers(const std::string& state) {
    std::set<std::string> ids;
    for (const std::string& root : {session::sessions_dir(state), session::trash_dir(state)})
        for (const auto& s : names_in(root))
            for (const auto& sub : names_in(root + "/" + s))
                for (const auto& n : names_in(root + "/" + s + "/" + sub))
                    if (number_of(n, ".ref"))
                        if (auto id = read_ref(root + "/" + s + "/" + sub + "/" + n)) ids.insert(id.value());
    return ids;
}

base::Result<Swept> sweep_store(const std::string& state, bool dry_run) {
    Swept out;
    std::string store = state + "/layers";
    if (!exists(store)) return out;
    TRY(base::Fd lock, lock_store(store, true));
    auto keep = referenced_layers(state);
    for (const auto& id : names_in(store)) {
        if (!valid_layer_id(id) || keep.count(id)) continue;
        out.ids.push_back(id);
        out.bytes += layer_usage(store + "/" + id);
        if (!dry_run) TRY_VOID(session::remove_tree(store + "/" + id));
    }
    return out;
}

std::vector<std::string> expire_rolled_back(const std::string& state, int64_t max_age_s, bool dry_run) {
    std::vector<std::string> out;
    time_t now = ::time(nullptr);
    std::string root = session::sessions_dir(state);
    for (const auto& s : names_in(root)) {
        std::string rb = root + "/" + s + "/rolled-back";
        struct stat st;
        if (::lstat((rb + "/at").c_str(), &st) != 0 || exists(rb + "/expired") || now - st.st_mtime <= max_age_s)
            continue;
        if (dry_run) {
            if (!session::is_locked(root + "/" + s)) out.push_back(s);
            continue;
        }
        auto lock = session::lock(root + "/" + s, s);  // no run, rollback or undo meanwhile
        if (!lock) continue;
        out.push_back(s);
        char when[32];
        std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
        base::Fd dir(::open(rb.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!dir.valid()) continue;
        for (const auto& n : names_in(rb))
            if (n != "at") (void)review::remove_tree_at(dir.get(), n);
        base::Fd f(::openat(dir.get(), "expired", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (f.valid()) (void)base::write_all(f.get(), when, std::strlen(when));
    }
    return out;
}

Layers session_layers(const std::string& d) {
    Layers out;
    out.own.push_back(d + "/upper");
    for (const std::string& sub : {std::string("steps"), std::string("rolled-back")}) {
        std::string c = d + "/" + sub;
        for (const auto& n : names_in(c)) {
            if (number_of(n, "")) out.own.push_back(c + "/" + n);
            else if (number_of(n, ".ref"))
                if (auto id = read_ref(c + "/" + n)) out.shared.push_back(id.value());
        }
        if (sub == "rolled-back" && exists(c + "/upper")) out.own.push_back(c + "/upper");
    }
    return out;
}

Size session_size(const std::string& d, std::map<std::string, uint64_t>* store_cache, const uint64_t* upper_bytes) {
    Layers layers = session_layers(d);
    Size out;
    out.bytes = upper_bytes ? *upper_bytes : layer_usage(layers.own[0]);
    for (size_t i = 1; i < layers.own.size(); i++) out.bytes += layer_usage(layers.own[i]);
    for (const auto& id : layers.shared) {
        auto it = store_cache->find(id);
        if (it == store_cache->end()) it = store_cache->emplace(id, layer_usage(store_dir(d) + "/" + id)).first;
        out.store_bytes += it->second;
    }
    out.bytes += out.store_bytes;
    out.shared = std::move(layers.shared);
    return out;
}

std::vector<std::string> frozen_layers(const std::string& d) {
    Layers l = session_layers(d);
    std::vector<std::string> out(l.own.begin() + 1, l.own.end());
    for (const auto& id : l.shared) out.push_back(store_dir(d) + "/" + id);
    return out;
}

}  // namespace steps
