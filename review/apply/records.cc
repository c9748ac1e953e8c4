#include "review/apply/records.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "helper/base/clock.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "helper/store/records/usage.h"
#include "review/apply/recover.h"
#include "review/txn/journal.h"
#include "review/txn/txn.h"

namespace review {
namespace {

std::vector<std::string> entries(int dirfd) {
    std::vector<std::string> out;
    int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return out;
    DIR* d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        return out;
    }
    while (dirent* e = ::readdir(d))
        if (valid_token(e->d_name)) out.push_back(e->d_name);
    ::closedir(d);
    return out;
}

// The records under one store parent (STATE/undo/KEY or TARGET/.layover-undo).
// want_dev/want_ino: only this tree's (0: any); a record of another tree (a
// copied .layover-undo, or one removed since whose inode this tree reuses:
// want_btime, when both know a birth time) is left out, not damaged.
void collect(int parent, const std::string& parent_path, bool in_state, uint64_t want_dev, uint64_t want_ino,
             std::vector<RecordInfo>* out, std::vector<DamagedRecord>* damaged, int64_t want_btime = 0) {
    for (const auto& id : entries(parent)) {
        auto dir = base::open_at(parent, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (!dir.ok()) continue;
        std::string path = parent_path + "/" + id;
        auto t = read_undo_json(dir->get(), path, id, in_state);
        if (!t.ok()) {
            // No undo.json: unfinished, the journal's recovery owns it.
            if (t.error().code != ENOENT && damaged) damaged->push_back({path, t.error().message});
            continue;
        }
        if (want_dev && (t->dev != want_dev || t->ino != want_ino)) continue;
        if (want_btime && t->btime_ns && t->btime_ns != want_btime) continue;
        RecordInfo r;
        r.id = id;
        r.dir = path;
        r.target = t->target;
        r.source = t->source;
        r.created = t->created;
        r.created_s = base::parse_rfc3339(t->created);
        r.created_ns = t->created_ns ? t->created_ns : r.created_s * 1000000000;
        r.paths = t->units.size();
        r.in_state = in_state;
        r.key = target_key(t->dev, t->ino);
        int dup = ::fcntl(dir->get(), F_DUPFD_CLOEXEC, 0);
        if (dup >= 0) r.bytes = session::tree_usage(dup).bytes;
        out->push_back(std::move(r));
    }
}

void newest_first(std::vector<RecordInfo>* v) {
    std::stable_sort(v->begin(), v->end(), [](const RecordInfo& a, const RecordInfo& b) {
        if (a.key != b.key) return a.key < b.key;
        return a.created_ns > b.created_ns;
    });
}

}  // namespace

base::Result<Txn> read_undo_json(int store, const std::string& record, const std::string& id, bool in_state) {
    std::string file = base::display_path(record + "/undo.json");
    std::string remove = "remove the record (rm -r " + base::display_path(record) + ")";
    auto jf = base::open_at(store, "undo.json", O_RDONLY | O_NOFOLLOW);
    if (!jf.ok() && jf.error().code == ENOENT)
        return base::Error{"undo record " + base::display_path(record) +
                               " has no undo.json: the apply that made it did not finish, so it holds nothing to "
                               "undo; unless an apply is running there, " +
                               remove,
                           ENOENT};
    auto text = jf.ok() ? base::read_all(jf->get(), 512u << 20) : base::Result<std::string>(jf.error());
    if (!text.ok())
        return base::error("cannot read " + file + " (" + text.error().message + "); fix its permissions, or " +
                           remove + " if that apply needs no undo");
    auto t = txn_from_json(*text);
    std::string why = !t.ok()                      ? t.error().message
                      : t->id != id                ? "it is the record of another id"
                      : t->kind != TxnKind::Apply  ? "it is not an apply's record"
                      : t->state != TxnState::Done ? "its apply did not finish"
                      : t->in_state != in_state    ? "it says the record lives elsewhere"
                                                   : "";
    if (!why.empty())
        return base::error(file + " is damaged (" + why + "); it cannot be undone: put back the file apply wrote, or " +
                           remove + " if that apply needs no undo");
    return t;
}

int64_t parse_age(const std::string& s) {
    if (s.empty() || s.size() > 18) return -1;
    size_t digits = 0;
    while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') digits++;
    if (digits == 0 || s.size() - digits > 1) return -1;
    int64_t n = std::stoll(s.substr(0, digits));
    char unit = digits < s.size() ? s[digits] : 'd';
    int64_t mult = unit == 's'   ? 1
                   : unit == 'm' ? 60
                   : unit == 'h' ? 3600
                   : unit == 'd' ? 86400
                   : unit == 'w' ? 604800
                                 : 0;
    if (mult == 0 || n > INT64_MAX / mult) return -1;
    return n * mult;
}

std::string undo_command(const std::string& target) {
    std::string shown = base::display_path(target), quoted;
    bool plain = !shown.empty();
    for (char c : shown)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("/._-+,:@%", c))) plain = false;
    if (plain) {
        quoted = shown;
    } else {
        quoted = "'";
        for (char c : shown) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        quoted += "'";
    }
    return "layover undo --last --target " + quoted;
}

std::vector<size_t> select_pruned(const std::vector<int64_t>& created, const Retention& r, int64_t now) {
    std::vector<size_t> out;
    for (size_t i = r.keep; i < created.size(); i++) {
        // An unreadable time counts as old: it cannot prove it is young.
        int64_t age = created[i] < 0 ? INT64_MAX : now - created[i];
        if (age >= r.keep_days * 86400) out.push_back(i);
    }
    return out;
}

base::Result<std::vector<RecordInfo>> list_records(const std::string& state, int root, const std::string& target,
                                                   std::vector<DamagedRecord>* damaged) {
    struct stat st {};
    if (::fstat(root, &st) != 0) return base::sys_error("stat " + target);
    std::vector<RecordInfo> out;
    std::string home = state + "/undo/" + target_key(st.st_dev, st.st_ino);
    const int64_t born = tree_birth_ns(root);  // one statfs and statx for both store homes
    if (auto h = base::open_at(AT_FDCWD, home, O_RDONLY | O_DIRECTORY | O_NOFOLLOW); h.ok())
        collect(h->get(), home, true, st.st_dev, st.st_ino, &out, damaged, born);
    if (auto u = open_dir_beneath(root, kUndoDir); u.ok())
        collect(u->get(), (target == "/" ? "" : target) + "/" + kUndoDir, false, st.st_dev, st.st_ino, &out, damaged,
                born);
    newest_first(&out);
    return out;
}

base::Result<std::vector<RecordInfo>> list_state_records(const std::string& state) {
    std::vector<RecordInfo> out;
    std::string undo = state + "/undo";
    auto u = base::open_at(AT_FDCWD, undo, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (!u.ok()) {
        if (u.error().code == ENOENT) return out;
        return u.error();
    }
    for (const auto& key : entries(u->get())) {
        auto h = base::open_at(u->get(), key, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (!h.ok()) continue;
        std::vector<RecordInfo> mine;
        collect(h->get(), undo + "/" + key, true, 0, 0, &mine, nullptr);
        for (auto& r : mine)
            if (r.key == key) out.push_back(std::move(r));
    }
    newest_first(&out);
    return out;
}

base::Result<void> remove_record(const std::string& state, int root, const RecordInfo& r) {
    StoreRef ref;
    ref.root = root;
    ref.id = r.id;
    if (r.in_state) ref.home = state + "/undo/" + r.key;
    else if (root < 0) return base::error("a record inside a target needs the target open");
    return remove_store(ref);
}

// How many entries could be records of the tree at `root` (both homes): an
// upper bound on list_records' count, from directory listings alone.
size_t candidate_count(const std::string& state, int root) {
    struct stat st {};
    if (::fstat(root, &st) != 0) return SIZE_MAX;
    size_t n = 0;
    std::string home = state + "/undo/" + target_key(st.st_dev, st.st_ino);
    if (auto h = base::open_at(AT_FDCWD, home, O_RDONLY | O_DIRECTORY | O_NOFOLLOW); h.ok())
        n += entries(h->get()).size();
    if (auto u = open_dir_beneath(root, kUndoDir); u.ok()) n += entries(u->get()).size();
    return n;
}

base::Result<Freed> enforce_retention(const std::string& state, int root, const std::string& target, const Retention& r,
                                      const std::string& spare) {
    // Only records past the newest `keep` can go: with no more entries than
    // that, nothing is read (each record's undo.json lists every path it
    // changed: 10,000 paths cost ~80 ms to parse).
    if (candidate_count(state, root) <= r.keep) return Freed{};
    TRY(auto all, list_records(state, root, target));
    std::vector<int64_t> times;
    for (const auto& x : all) times.push_back(x.created_s);
    Freed f;
    for (size_t i : select_pruned(times, r, static_cast<int64_t>(::time(nullptr)))) {
        if (all[i].id == spare) continue;
        TRY_VOID(remove_record(state, root, all[i]));
        f.count++;
        f.bytes += all[i].bytes;
    }
    return f;
}

}  // namespace review
