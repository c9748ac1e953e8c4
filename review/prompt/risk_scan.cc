#include "review/prompt/risk_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper/base/fd.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "review/prompt/content_risk.h"

namespace review {

bool content_risk_wanted(const capture::Change& c) {
    using capture::Kind;
    if (c.type != capture::Type::File || c.kind == Kind::Deleted || c.kind == Kind::Metadata ||
        c.kind == Kind::OpaqueDir)
        return false;
    return c.size <= kSecretScanMax && content_scanned(c.path);
}

void add_content_risk(RiskContext* ctx, const capture::Change& c, std::string_view now, const TextOf& old_text) {
    std::optional<std::string> before;
    if (c.kind != capture::Kind::Added && c.old_type == capture::Type::File) before = old_text(c.path);
    auto r = content_risks(c.path, now, before ? *before : std::string());
    if (r.phrases.empty()) return;
    auto& list = ctx->content[c.path];
    list.insert(list.end(), r.phrases.begin(), r.phrases.end());
    for (auto& h : r.secrets) ctx->secrets.emplace_back(c.path, std::move(h));
}

void add_content_risks(RiskContext* ctx, const std::vector<capture::Change>& changes, const TextOf& new_text,
                       const TextOf& old_text) {
    for (const auto& c : changes) {
        if (!content_risk_wanted(c)) continue;
        auto now = new_text(c.path);
        if (now) add_content_risk(ctx, c, *now, old_text);
    }
}

std::optional<std::string> read_text_beneath(int root, const std::string& rel) {
    auto fd = open_beneath(root, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (!fd) return std::nullopt;
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > kSecretScanMax)
        return std::nullopt;
    return base::read_upto(fd->get(), static_cast<size_t>(st.st_size));
}

std::function<bool(const std::string&)> makefile_probe(std::shared_ptr<base::Fd> root) {
    return [root](const std::string& dir) {
        auto d = open_dir_beneath(root->get(), dir);
        if (!d) return false;
        int dfd = ::fcntl(d->get(), F_DUPFD_CLOEXEC, 0);
        if (dfd < 0) return false;
        DIR* dp = ::fdopendir(dfd);
        if (!dp) {
            ::close(dfd);
            return false;
        }
        bool found = false;
        while (struct dirent* e = ::readdir(dp)) {
            std::string n = e->d_name;
            if (n == "Makefile" || n == "makefile" || n == "GNUmakefile" ||
                (n.size() > 3 && n.compare(n.size() - 3, 3, ".mk") == 0)) {
                found = true;
                break;
            }
        }
        ::closedir(dp);
        return found;
    };
}

std::vector<std::string> secret_lines(const RiskContext& ctx) {
    std::vector<std::string> out;
    for (const auto& [path, h] : ctx.secrets) {
        std::string s = base::display_path(path) + ":" + std::to_string(h.line) + ": " + h.kind;
        if (!h.shown.empty() && h.kind != "private key") s += " (" + h.shown + ")";
        out.push_back(s);
    }
    return out;
}

}  // namespace review
