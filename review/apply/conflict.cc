#include "review/apply/conflict.h"

#include <cstdio>
#include <map>

namespace review {

std::string mode_octal(uint32_t mode) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
    return buf;
}

bool needs_fingerprint(const capture::BaseEntry& base, const Observed& real) {
    if (base.absent || !real.exists || base.fingerprint.empty() || base.type != real.type) return false;
    if (base.type == capture::Type::File) return base.size == real.size;
    return base.type == capture::Type::Symlink;
}

std::string compare_entry(const capture::BaseEntry& base, const Observed& real) {
    using capture::Type;
    if (base.absent) {
        if (real.exists)
            return std::string("exists on the target now (a ") + capture::type_name(real.type) +
                   "), but the patch expects it absent";
        return "";
    }
    if (!real.exists) return "was removed from the target since the patch was made";
    if (base.stale) return "was changed on the target after the sandbox's version was made (stale copy)";
    if (base.type != real.type)
        return std::string("type changed on the target: was ") + capture::type_name(base.type) + ", now " +
               capture::type_name(real.type);
    if (base.type == Type::File && base.size != real.size)
        return "content changed on the target (size " + std::to_string(base.size) + " -> " + std::to_string(real.size) +
               ")";
    if (base.type != Type::Symlink && (base.mode & 07777) != (real.mode & 07777))
        return "mode changed on the target (" + mode_octal(base.mode) + " -> " + mode_octal(real.mode) + ")";
    if (!base.fingerprint.empty() && (base.type == Type::File || base.type == Type::Symlink) &&
        base.fingerprint != real.fingerprint)
        return base.type == Type::Symlink ? "link target changed on the target" : "content changed on the target";
    return "";
}

std::vector<Conflict> compare_subtree(const std::vector<capture::BaseEntry>& base_under,
                                      const std::vector<Observed>& real_under) {
    std::vector<Conflict> out;
    std::map<std::string, const Observed*> real;
    for (const auto& r : real_under) real[r.path] = &r;
    std::map<std::string, bool> seen;
    for (const auto& b : base_under) {
        if (b.absent) continue;
        seen[b.path] = true;
        auto it = real.find(b.path);
        Observed missing;
        missing.path = b.path;
        const Observed& r = it == real.end() ? missing : *it->second;
        std::string why = compare_entry(b, r);
        if (!why.empty()) out.push_back({b.path, why});
    }
    for (const auto& r : real_under)
        if (!seen.count(r.path))
            out.push_back({r.path, "is new on the target inside a directory the patch deletes or replaces"});
    return out;
}

}  // namespace review
