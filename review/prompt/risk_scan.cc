#include "review/prompt/risk_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper/base/fd.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "helper/base/thread.h"
#include "review/prompt/content_risk.h"

namespace review {

namespace {

// The old side only ever removes a risk (a line already there is not new), so
// it is read only when the new side alone shows one.
ContentRisks text_risks(const capture::Change& c, std::string_view now, const TextOf& old_text) {
    ContentRisks r = content_risks(c.path, now, {});
    if (r.phrases.empty() || c.kind == capture::Kind::Added || c.old_type != capture::Type::File) return r;
    auto before = old_text(c.path);
    if (!before) return r;
    return content_risks(c.path, now, *before);
}

// nullopt: the new side could not be read (absent, not a regular file, too big).
std::optional<ContentRisks> file_risks(const capture::Change& c, const TextOf& new_text, const TextOf& old_text) {
    auto now = new_text(c.path);
    if (!now) return std::nullopt;
    return text_risks(c, *now, old_text);
}

constexpr size_t kTwoThreads = 256;  // files: below this one thread is quicker

void add_found(RiskContext* ctx, const std::string& path, ContentRisks&& r) {
    auto& list = ctx->content[path];
    list.insert(list.end(), r.phrases.begin(), r.phrases.end());
    for (auto& h : r.secrets) ctx->secrets.emplace_back(path, std::move(h));
}

}  // namespace

bool content_risk_wanted(const capture::Change& c) {
    using capture::Kind;
    return c.type == capture::Type::File && c.kind != Kind::Deleted && c.kind != Kind::Metadata &&
           c.kind != Kind::OpaqueDir && c.size <= kSecretScanMax && content_scanned(c.path);
}

void add_content_risk(RiskContext* ctx, const capture::Change& c, std::string_view now, const TextOf& old_text) {
    auto r = text_risks(c, now, old_text);
    if (!r.phrases.empty()) add_found(ctx, c.path, std::move(r));
}

void add_content_risks(RiskContext* ctx, const std::vector<capture::Change>& changes, const TextOf& new_text,
                       const TextOf& old_text, capture::VerdictCache* verdicts) {
    std::vector<const capture::Change*> todo;
    for (const auto& c : changes)
        if (content_risk_wanted(c) && !c.risk_free_cached) todo.push_back(&c);
    std::vector<std::optional<ContentRisks>> found(todo.size());
    auto scan = [&](size_t from, size_t to) {
        for (size_t i = from; i < to; i++) found[i] = file_risks(*todo[i], new_text, old_text);
    };
    if (todo.size() >= kTwoThreads) {
        size_t half = todo.size() / 2;
        base::run_halves(
            [&] {
                scan(0, half);
                return true;
            },
            [&] { scan(half, todo.size()); });
    } else {
        scan(0, todo.size());
    }
    for (size_t i = 0; i < todo.size(); i++) {
        if (!found[i]) continue;
        const std::string& path = todo[i]->path;
        if (found[i]->phrases.empty()) {
            if (verdicts) verdicts->record_risk_free(path);
            continue;
        }
        add_found(ctx, path, std::move(*found[i]));
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
