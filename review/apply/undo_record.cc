#include "review/apply/undo_record.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "capture/patch/writer.h"
#include "capture/scan/entry/fingerprint.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "helper/base/version.h"
#include "helper/store/records/owner_ns.h"
#include "review/apply/observe.h"
#include "review/apply/records.h"
#include "review/apply/recover.h"
#include "review/apply/undo_vouch.h"
#include "review/txn/fault.h"
#include "review/txn/fsops.h"
#include "review/txn/journal.h"

namespace review {

using capture::Change;
using capture::Kind;
using capture::Type;

Kind undo_kind(Op op, Type orig, Type after) {
    if (orig == Type::None) return Kind::Deleted;
    if (after == Type::None) return Kind::Added;
    if (op == Op::Meta) return Kind::Metadata;
    if (orig == Type::Dir && after == Type::Dir) return Kind::OpaqueDir;
    return orig == after ? Kind::Modified : Kind::TypeChanged;
}

bool walk_less(const std::string& a, const std::string& b) {
    // '/' sorts before every byte a name can hold, so a dir's subtree comes
    // right after it and before its next sibling ("a", "a/b", "a-c").
    auto rank = [](char c) { return c == '/' ? 0 : static_cast<unsigned char>(c) + 1; };
    size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; i++)
        if (rank(a[i]) != rank(b[i])) return rank(a[i]) < rank(b[i]);
    return a.size() < b.size();
}

namespace {

// One entry as it is on disk, in the undo store or the target.
struct Node {
    bool exists = false;
    struct stat st {};
    Type type = Type::None;
    std::string link;
    std::map<std::string, std::string> xattrs;
};

base::Result<Node> look(int root, const std::string& rel) {
    Node n;
    auto [parent, name] = split_parent(rel);
    TRY(base::Fd dir, open_dir_beneath(root, parent));
    if (::fstatat(dir.get(), name.c_str(), &n.st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return n;
        return base::sys_error("stat " + base::display_path(rel));
    }
    n.exists = true;
    n.type = type_of_mode(n.st.st_mode);
    if (n.type == Type::Symlink) {
        std::string buf(65536, '\0');
        ssize_t len = ::readlinkat(dir.get(), name.c_str(), buf.data(), buf.size());
        if (len < 0 || static_cast<size_t>(len) >= buf.size())
            return base::sys_error("readlink " + base::display_path(rel));
        buf.resize(static_cast<size_t>(len));
        n.link = std::move(buf);
    } else if (n.type == Type::File || n.type == Type::Dir) {
        TRY(base::Fd f, base::open_at(dir.get(), name, O_PATH | O_NOFOLLOW));
        TRY(n.xattrs, get_user_xattrs(f.get()));
    }
    return n;
}

struct Source {
    int root;
    std::string rel;
};

// Collects the undo patch's changes, items and base records unit by unit.
class Builder {
public:
    Builder(int root, int store) : root_(root), store_(store) {}

    base::Result<void> unit(const Unit& u) {
        TRY(Node after, look(root_, u.path));
        if (after.exists != (u.op != Op::Delete) || after.type == Type::Other) return changed(u.path);
        TRY_VOID(after_base(u, after));
        Type after_type = after.exists ? after.type : Type::None;
        switch (u.op) {
            case Op::Add: {
                Change c;
                c.path = u.path;
                c.kind = Kind::Deleted;
                c.old_type = after.type;
                c.old_mode = after.st.st_mode & 07777;
                capture::Item it;
                it.change = std::move(c);
                it.whiteout = true;
                items_.push_back(std::move(it));
                return base::Ok();
            }
            case Op::Meta:
            case Op::InPlace: {
                // The original's attributes are in the record; its content is the
                // target's (metadata) or the copy in the store (in place).
                Node o = after;
                Source src{root_, u.path};
                if (u.op == Op::InPlace) {
                    TRY(o, look(store_, u.slot));
                    if (!o.exists || o.type != Type::File) return missing(u.path);
                    src = {store_, u.slot};
                }
                Change c = change_of(u.path, o, undo_kind(u.op, o.type, after_type), after);
                if (o.type != Type::Symlink) c.mode = u.old_mode & 07777;
                c.mtime_ns = u.old_mtime_ns;
                c.xattrs = u.old_xattrs;
                add(std::move(c), o, src, false);
                items_.back().nlink = 1;  // its data, never a link to another member
                return base::Ok();
            }
            case Op::Replace:
            case Op::Delete: {
                TRY(Node o, look(store_, u.slot));
                if (!o.exists || o.st.st_ino != u.old_ino) return missing(u.path);
                Kind k = undo_kind(u.op, o.type, after_type);
                TRY_VOID(add_original(u.path, u.slot, o, k, after));
                items_.back().opaque = k == Kind::OpaqueDir;
                if (o.type != Type::Dir) return base::Ok();
                TRY(auto tree, walk_tree(store_, u.slot));
                for (const auto& e : tree) {
                    std::string p = u.path + "/" + e.path, rel = u.slot + "/" + e.path;
                    TRY(Node n, look(store_, rel));
                    if (!n.exists) return missing(p);
                    TRY_VOID(add_original(p, rel, n, Kind::Added, Node{}));
                    // A record of the after-state subtree (an opaque dir) takes precedence.
                    if (n.type != Type::Socket) base_.emplace(p, absent(p));
                }
                return base::Ok();
            }
        }
        return base::Ok();
    }

    capture::Manifest manifest(const Txn& t) {
        std::sort(items_.begin(), items_.end(), [](const capture::Item& a, const capture::Item& b) {
            return walk_less(a.change.path, b.change.path);
        });
        capture::Manifest m;
        m.format = "layover-patch/1";
        m.target = t.target;
        m.created = now_rfc3339();
        m.version = LAYOVER_VERSION;
        m.kind = "undo";
        m.undo_store = t.store;
        for (const auto& it : items_) m.changes.push_back(it.change);
        for (auto& [p, b] : base_) m.base.push_back(b);
        std::sort(m.base.begin(), m.base.end(),
                  [](const capture::BaseEntry& a, const capture::BaseEntry& b) { return walk_less(a.path, b.path); });
        return m;
    }

    const std::vector<capture::Item>& items() const { return items_; }

    base::Result<base::Fd> open_data(const capture::Item& it) const {
        auto s = data_.find(it.change.path);
        if (s == data_.end()) return base::error("no data for " + base::display_path(it.change.path));
        auto fd = open_beneath(s->second.root, s->second.rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (!fd.ok()) return fd.error().context("reading the original of " + base::display_path(it.change.path));
        return fd;
    }

private:
    static base::Error changed(const std::string& path) {
        return base::error(base::display_path(path) + " is not as the apply left it (changed meanwhile)");
    }
    static base::Error missing(const std::string& path) {
        return base::error("the original of " + base::display_path(path) + " is missing from the undo store");
    }
    static capture::BaseEntry absent(const std::string& path) {
        capture::BaseEntry b;
        b.path = path;
        b.absent = true;
        return b;
    }

    // What the undo patch expects to find: the after-apply entry, and for a
    // directory it will remove or replace, every entry beneath it.
    base::Result<void> after_base(const Unit& u, const Node& after) {
        if (!after.exists) {
            base_[u.path] = absent(u.path);
            return base::Ok();
        }
        TRY(base_[u.path], base_of(u.path, after));
        if (after.type != Type::Dir || (u.op != Op::Add && u.op != Op::Replace)) return base::Ok();
        TRY(auto tree, walk_tree(root_, u.path));
        for (const auto& e : tree) {
            std::string p = u.path + "/" + e.path;
            TRY(Node n, look(root_, p));
            if (!n.exists) return changed(p);
            TRY(base_[p], base_of(p, n));
        }
        return base::Ok();
    }

    base::Result<capture::BaseEntry> base_of(const std::string& path, const Node& n) {
        capture::BaseEntry b;
        b.path = path;
        b.type = n.type;
        b.mode = n.st.st_mode & 07777;
        if (n.type == Type::File) {
            b.size = static_cast<uint64_t>(n.st.st_size);
            TRY(base::Fd f, open_beneath(root_, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
            auto fp = capture::fingerprint_fd(f.get(), b.size);
            if (!fp) return fp.error().context("reading " + base::display_path(path));
            b.fingerprint = std::move(fp.value());
        } else if (n.type == Type::Symlink) {
            b.fingerprint = capture::fingerprint_bytes(n.link);
        }
        return b;
    }

    static Change change_of(const std::string& path, const Node& n, Kind k, const Node& after) {
        Change c;
        c.path = path;
        c.kind = k;
        c.type = n.type;
        c.size = n.type == Type::File ? static_cast<uint64_t>(n.st.st_size) : 0;
        c.mode = n.type == Type::Symlink ? 0777 : n.st.st_mode & 07777;
        c.link_target = n.link;
        c.mtime_ns = ns_of(n.st.st_mtim);
        c.xattrs = n.xattrs;
        c.captured = n.type != Type::Socket;
        c.old_type = after.exists ? after.type : Type::None;
        c.old_mode = after.exists ? after.st.st_mode & 07777 : 0;
        return c;
    }

    base::Result<void> add_original(const std::string& path, const std::string& rel, const Node& n, Kind k,
                                    const Node& after) {
        if (n.type == Type::Other)
            return base::error("cannot export " + base::display_path(path) +
                               ": it is a device node, which a patch cannot hold");
        add(change_of(path, n, k, after), n, {store_, rel}, true);
        return base::Ok();
    }

    void add(Change c, const Node& n, Source src, bool links) {
        capture::Item it;
        it.ino = n.st.st_ino;
        it.nlink = links ? n.st.st_nlink : 1;
        if (c.type == Type::File) data_[c.path] = std::move(src);
        it.change = std::move(c);
        items_.push_back(std::move(it));
    }

    int root_, store_;
    std::vector<capture::Item> items_;
    std::map<std::string, capture::BaseEntry> base_;
    std::map<std::string, Source> data_;
};

}  // namespace

base::Result<UndoPatchOut> UndoPatchOut::create(const std::string& file) {
    UndoPatchOut o;
    o.file_ = file;
    auto slash = file.rfind('/');
    std::string dir = slash == std::string::npos ? "" : file.substr(0, slash + 1);
    std::string name = slash == std::string::npos ? file : file.substr(slash + 1);
    if (name.empty())
        return base::error("--undo-to " + base::display_path(file) + " names a directory; give a file name");
    o.tmp_ = dir + "." + name + ".tmp-" + random_token(4);
    auto fd = base::open_at(AT_FDCWD, o.tmp_, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (!fd.ok())
        return base::error("cannot create the undo patch " + base::display_path(file) + ": " + fd.error().message +
                           "; pass --undo-to a file in a writable directory; nothing was applied");
    o.fd_ = std::move(fd).value();
    (void)::fchmod(o.fd_.get(), 0600);
    return o;
}

UndoPatchOut::~UndoPatchOut() {
    if (fd_.valid()) ::unlink(tmp_.c_str());
}

base::Result<void> UndoPatchOut::write(int root, int store_fd, const Txn& txn) {
    int out = fd_.get();
    // In a child that owns the caller's files: originals may be mode 000.
    auto r = capture::in_owner_ns([&]() -> base::Result<std::string> {
        Builder b(root, store_fd);
        for (const auto& u : txn.units) TRY_VOID(b.unit(u));
        capture::Manifest m = b.manifest(txn);
        capture::OpenFile open = [&b](const capture::Item& it) { return b.open_data(it); };
        TRY_VOID(capture::write_patch(out, m, b.items(), open));
        return std::string();
    });
    auto what = "writing the undo patch " + base::display_path(file_);
    if (!r.ok()) return r.error().context(what);
    if (auto f = fault_point("apply", "undo-to"); !f.ok()) return f.error().context(what);
    if (::fsync(out) != 0) return base::sys_error(what);
    if (::rename(tmp_.c_str(), file_.c_str()) != 0) return base::sys_error(what);
    fd_.reset();
    return base::Ok();
}

namespace {

// The store an undo patch was exported from, when it is this tree's: its
// record names this root's device and inode, every path it lists is a change
// of the patch, and the patch changes nothing else (below). nullopt: none (or
// not this tree's, or a patch that says more than its record).
base::Result<std::optional<std::pair<StoreRef, Txn>>> exported_store(int root, const std::string& state, uint64_t dev,
                                                                     uint64_t ino, const capture::Patch& patch) {
    using Found = std::optional<std::pair<StoreRef, Txn>>;
    const capture::Manifest& undo = patch.manifest();
    const std::string& undo_store = undo.undo_store;
    if (undo.kind != "undo") return Found();
    // Which store the patch names: this tree's in the state dir, or in the tree.
    Txn want;
    want.dev = dev;
    want.ino = ino;
    auto [parent, id] = split_parent(undo_store);
    want.id = id;
    if (!valid_token(id)) return Found();
    want.in_state = undo_store != store_rel_of(want);
    if (want.in_state && undo_store != store_rel_of(want)) return Found();
    StoreRef ref = store_ref(root, state, want);
    auto st = open_store(ref, false);
    if (!st.ok()) return Found();
    // A record that cannot be read (none, unreadable, damaged) vouches for
    // nothing and is not retired: `undo --list` shows it as damaged.
    auto t = read_undo_json(st->dir.get(), undo_store, id, want.in_state);
    // Nor an earlier tree's at this inode, removed since (attack25, attack27).
    if (!t.ok() || t->dev != dev || t->ino != ino) return Found();
    if (int64_t born = t->btime_ns ? tree_birth_ns(root) : 0; born && born != t->btime_ns) return Found();
    // The patch is untrusted input: it may only retire the record it was made
    // from, and restore nothing but what that record's store keeps.
    if (!undo_patch_within_record(st->dir.get(), t.value(), patch)) return Found();
    return Found(std::pair<StoreRef, Txn>(std::move(ref), std::move(t).value()));
}

}  // namespace

base::Result<bool> undo_patch_vouched(int root, const std::string& state, uint64_t dev, uint64_t ino,
                                      const capture::Patch& patch) {
    TRY(auto found, exported_store(root, state, dev, ino, patch));
    return found.has_value();
}

base::Result<std::string> retire_exported_store(int root, const std::string& state, uint64_t dev, uint64_t ino,
                                                const capture::Patch& patch) {
    TRY(auto found, exported_store(root, state, dev, ino, patch));
    if (!found) return std::string();
    TRY_VOID(remove_store(found->first));
    return store_path(state, found->second);
}

}  // namespace review
