#include "review/apply/plan.h"

#include <algorithm>
#include <string_view>

#include "capture/patch/path_map.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"

namespace review {

using capture::Change;
using capture::Kind;
using capture::Member;
using capture::Type;

namespace {

bool creates_dir(const Change& c) {
    return c.type == Type::Dir && (c.kind == Kind::Added || c.kind == Kind::TypeChanged || c.kind == Kind::OpaqueDir);
}

// Views into the patch's own strings (members and manifest), which outlive
// the plan's making, in flat maps (a value, when used, is an index).
using Paths = capture::PathMap;

// The nearest proper ancestor of p in `set`, or "" with found=false.
bool ancestor_in(std::string_view p, const Paths& set, std::string_view* which) {
    for (size_t slash = p.rfind('/'); slash != std::string_view::npos; slash = p.rfind('/', slash - 1)) {
        std::string_view a = p.substr(0, slash);
        if (set.find(a)) {
            if (which) *which = a;
            return true;
        }
        if (slash == 0) break;
    }
    return false;
}

base::Error bad(const std::string& path, const std::string& why) {
    return base::error("patch is unsafe or inconsistent: " + base::display_path(path) + ": " + why +
                       "; nothing was applied");
}

// Only user.* xattrs are ever applied (anything else makes the patch
// invalid), and not overlayfs's own user.overlay.*: inside, overlayfs escapes
// a program's user.overlay.X as user.overlay.overlay.X and capture turns it
// back, so on the real tree it would be a live overlay marker (a whiteout, an
// opaque dir, a redirect) the next time the tree is a session's lower layer.
bool user_xattr(const std::string& name) { return name.rfind("user.", 0) == 0; }
bool overlay_xattr(const std::string& name) { return name.rfind("user.overlay.", 0) == 0; }

// An agent may make these names; apply never writes or deletes them (they
// are its staging names and undo store), so a selected one stops the apply.
base::Error reserved_name(const std::string& path) {
    return base::error(base::display_path(path) +
                       " uses a name reserved for layover's own staging/undo (.layover-tmp.*, .layover-undo); "
                       "leave it out with --exclude " +
                       base::display_path(path) + "; nothing was applied");
}

base::Error overlay_marker(const std::string& path, const std::string& name) {
    return base::error(base::display_path(path) + " carries xattr " + base::display_path(name) +
                       ", overlayfs's own namespace: on the real tree it would act as an overlay marker in "
                       "later sessions; leave it out with --exclude, or remove the xattr in the session; "
                       "nothing was applied");
}

bool member_kind_ok(Member::Kind k) {
    return k == Member::Kind::File || k == Member::Kind::Dir || k == Member::Kind::Symlink ||
           k == Member::Kind::Hardlink || k == Member::Kind::Fifo;
}

}  // namespace

std::string staged_path(const PlanItem& it, const std::string& p) {
    return it.unit.tmp + p.substr(it.unit.path.size());
}

base::Result<Plan> make_plan(const capture::Patch& patch, const PathFilter& filter) {
    const auto& man = patch.manifest();
    const auto& all = patch.members();
    Paths members(all.size());  // path -> index in all
    for (size_t mi = 0; mi < all.size(); mi++) {
        const Member& m = all[mi];
        if (!safe_relpath(m.path)) return bad(m.path, "unsafe member name");
        if (m.kind == Member::Kind::Whiteout || m.kind == Member::Kind::Opaque) continue;
        if (!member_kind_ok(m.kind)) return bad(m.path, "member type not allowed");
        if (m.kind == Member::Kind::Hardlink && (!safe_relpath(m.link_target) || !members.find(m.link_target)))
            return bad(m.path, "hard link to something that is not an earlier member");
        for (const auto& [k, v] : m.xattrs)
            if (!user_xattr(k))
                return bad(m.path, "carries xattr " + base::display_path(k) + " (only user.* are allowed)");
        *members.get(m.path) = static_cast<uint32_t>(mi);
    }

    Paths new_dirs, gone;
    for (const auto& c : man.changes) {
        if (!safe_relpath(c.path)) return bad(c.path, "unsafe path");
        for (const auto& [k, v] : c.xattrs)
            if (!user_xattr(k))
                return bad(c.path, "carries xattr " + base::display_path(k) + " (only user.* are allowed)");
        // A metadata change is applied from the manifest's own xattr list:
        // it must say what the payload (what diff and tar show) says.
        if (c.kind == Kind::Metadata && c.captured) {
            const uint32_t* m = members.find(c.path);
            if (m && all[*m].xattrs != c.xattrs)
                return bad(c.path, "the manifest's xattrs differ from the payload member's");
        }
        if (creates_dir(c)) new_dirs.get(c.path);
        if (c.kind == Kind::Deleted || (c.kind == Kind::TypeChanged && c.old_type == Type::Dir && c.type != Type::Dir))
            gone.get(c.path);
    }

    Plan plan;
    Paths seen(man.changes.size());
    for (const auto& c : man.changes) {
        bool fresh = false;
        seen.get(c.path, 0, &fresh);
        if (!fresh) return bad(c.path, "listed twice");
        std::string_view anc;
        if (ancestor_in(c.path, new_dirs, nullptr)) continue;  // staged with its new parent
        if (ancestor_in(c.path, gone, &anc)) {
            if (c.kind == Kind::Deleted) continue;  // removed with its deleted parent
            return bad(c.path, "written beneath " + base::display_path(std::string(anc)) + ", which the patch deletes");
        }
        if (!filter.needed(c.path)) continue;
        if (!c.captured || c.type == Type::Socket) {
            plan.skipped.push_back(c.path);
            continue;
        }
        PlanItem it;
        it.unit.path = c.path;
        it.change = &c;
        if (c.kind == Kind::Deleted) {
            it.deletes = true;
        } else if (c.kind == Kind::Metadata) {
            it.meta_only = true;
        } else {
            if (c.type != Type::File && c.type != Type::Dir && c.type != Type::Symlink && c.type != Type::Fifo)
                return bad(c.path, std::string("cannot apply an entry of type ") + capture::type_name(c.type));
            const uint32_t* m = members.find(c.path);
            if (!m) return bad(c.path, "the payload has no member for this change");
            it.member = &all[*m];
            bool replaces_dir = c.kind != Kind::Added;
            if (replaces_dir && !filter.selects(c.path) && filter.selects_strictly_beneath(c.path))
                return base::error("--only " + base::display_path(c.path) +
                                   "/...: that directory is replaced as a whole by the patch; use --only " +
                                   base::display_path(c.path));
        }
        plan.items.push_back(std::move(it));
    }

    // A directory the patch deletes or replaces goes as a whole: a
    // selection may not leave out anything its base records beneath it.
    if (!filter.empty()) {
        std::vector<std::string_view> base_paths;
        base_paths.reserve(man.base.size());
        for (const auto& b : man.base) base_paths.push_back(b.path);
        std::sort(base_paths.begin(), base_paths.end());
        for (const auto& it : plan.items) {
            if (it.meta_only || it.change->kind == Kind::Added) continue;
            std::string prefix = it.unit.path + "/";
            for (auto b = std::lower_bound(base_paths.begin(), base_paths.end(), std::string_view(prefix));
                 b != base_paths.end() && b->substr(0, prefix.size()) == prefix; ++b)
                if (!filter.selects(*b))
                    return base::error("--only/--exclude leave out " + base::display_path(std::string(*b)) +
                                       ", but the patch " + (it.deletes ? "deletes " : "replaces ") +
                                       base::display_path(it.unit.path) +
                                       " as a whole; select all of it or none of it");
        }
    }

    // Children of new directories, selected, sorted so parents come first.
    Paths by_path;  // path -> index in plan.items
    for (size_t i = 0; i < plan.items.size(); i++) {
        const PlanItem& it = plan.items[i];
        if (it.member && it.member->kind == Member::Kind::Dir) *by_path.get(it.unit.path) = static_cast<uint32_t>(i);
    }
    for (const auto& m : patch.members()) {
        if (m.kind == Member::Kind::Whiteout || m.kind == Member::Kind::Opaque) continue;
        std::string_view anc;
        if (!ancestor_in(m.path, new_dirs, &anc)) continue;
        // The outermost new dir owns it.
        std::string_view outer = anc;
        while (ancestor_in(outer, new_dirs, &anc)) outer = anc;
        const uint32_t* owner = by_path.find(outer);
        if (!owner || !filter.needed(m.path)) continue;
        plan.items[*owner].tree.push_back(&m);
    }
    Paths staged(all.size());
    for (auto& it : plan.items) {
        auto path_less = [](const Member* a, const Member* b) { return a->path < b->path; };
        if (!std::is_sorted(it.tree.begin(), it.tree.end(), path_less))
            std::sort(it.tree.begin(), it.tree.end(), path_less);
        if (it.member) staged.get(it.member->path);
        for (auto* m : it.tree) staged.get(m->path);
    }
    for (const auto& it : plan.items) {
        if (is_reserved_path(it.unit.path)) return reserved_name(it.unit.path);
        for (const Member* m : it.tree)
            if (is_reserved_path(m->path)) return reserved_name(m->path);
    }
    for (const auto& it : plan.items) {
        for (const auto& [k, v] : it.change->xattrs)
            if (overlay_xattr(k)) return overlay_marker(it.unit.path, k);
        for (const Member* m : it.tree)
            for (const auto& [k, v] : m->xattrs)
                if (overlay_xattr(k)) return overlay_marker(m->path, k);
        if (it.member)
            for (const auto& [k, v] : it.member->xattrs)
                if (overlay_xattr(k)) return overlay_marker(it.unit.path, k);
    }
    for (auto& it : plan.items) {
        auto check = [&](const Member* m) -> base::Result<void> {
            if (m->kind == Member::Kind::Hardlink && !staged.find(m->link_target))
                return base::error(base::display_path(m->path) + " is a hard link to " +
                                   base::display_path(m->link_target) +
                                   ", which is not selected; select both or neither");
            return base::Ok();
        };
        if (it.member) TRY_VOID(check(it.member));
        for (auto* m : it.tree) TRY_VOID(check(m));
    }

    // Commit order: by path (parents first); metadata of directories last,
    // deepest first, so a directory made read-only does not block its children.
    std::stable_sort(plan.items.begin(), plan.items.end(), [](const PlanItem& a, const PlanItem& b) {
        bool ad = a.meta_only && a.change->type == Type::Dir, bd = b.meta_only && b.change->type == Type::Dir;
        if (ad != bd) return bd;
        if (ad) return a.unit.path > b.unit.path;
        return a.unit.path < b.unit.path;
    });
    return plan;
}

}  // namespace review
