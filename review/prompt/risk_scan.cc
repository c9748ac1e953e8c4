#include "review/prompt/risk_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

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
                       const TextOf& old_text, capture::VerdictCache* verdicts, WalkRiskReader* walk) {
    using Read = capture::Change::Read;
    std::vector<const capture::Change*> todo;
    for (const auto& c : changes)
        if (c.content_read == Read::NotRead && content_risk_wanted(c) && !c.risk_free_cached) todo.push_back(&c);
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
    // In change order, whoever read each file (the secrets list keeps it).
    size_t i = 0;
    for (const auto& c : changes) {
        std::optional<ContentRisks> r;
        if (i < todo.size() && todo[i] == &c) {
            r = std::move(found[i++]);
        } else if (c.content_read == Read::Free) {
            r.emplace();
        } else if (c.content_read == Read::Risky && walk) {
            r = walk->take(c.path);
        }
        if (!r) continue;
        if (r->phrases.empty()) {
            // What the walk read clean, the walk told the cache itself.
            if (verdicts && c.content_read != Read::Free) verdicts->record_risk_free(c.path);
            continue;
        }
        add_found(ctx, c.path, std::move(*r));
    }
}

bool WalkRiskReader::wants_path(const std::string& path) const { return content_scanned(path); }

bool WalkRiskReader::wants(const capture::Change& c) const { return content_risk_wanted(c); }

capture::Change::Read WalkRiskReader::read(const capture::Change& c, int fd, uint64_t size, int low,
                                           const std::string& name) {
    using Read = capture::Change::Read;
    if (size > kSecretScanMax) return Read::Unreadable;  // as read_text_beneath: not read
    // One buffer per walk thread, grown to the biggest file, never zeroed again.
    thread_local std::string buf;
    if (buf.size() < size) buf.resize(size);
    size_t got = 0;
    while (got < size) {  // as base::read_upto: a short file or a read error ends it
        ssize_t n = ::pread(fd, buf.data() + got, size - got, static_cast<off_t>(got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<size_t>(n);
    }
    ContentRisks r = text_risks(c, std::string_view(buf.data(), got),
                                [&](const std::string&) { return low < 0 ? std::nullopt : read_text_at(low, name); });
    if (r.phrases.empty()) return Read::Free;
    std::lock_guard<std::mutex> g(mu_);
    found_[c.path] = std::move(r);
    return Read::Risky;
}

ContentRisks WalkRiskReader::take(const std::string& path) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = found_.find(path);
    if (it == found_.end()) return {};
    ContentRisks r = std::move(it->second);
    found_.erase(it);
    return r;
}

namespace {

std::optional<std::string> read_text_of(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > kSecretScanMax)
        return std::nullopt;
    return base::read_upto(fd, static_cast<size_t>(st.st_size));
}

}  // namespace

std::optional<std::string> read_text_beneath(int root, const std::string& rel) {
    auto fd = open_beneath(root, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (!fd) return std::nullopt;
    return read_text_of(fd->get());
}

std::optional<std::string> read_text_at(int dirfd, const std::string& name) {
    base::Fd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) return std::nullopt;
    return read_text_of(fd.get());
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

std::function<bool(const std::string&)> git_repo_probe(std::shared_ptr<base::Fd> root) {
    // One openat2 for a dir that holds none (the common case), ~1 us: a
    // session deleting 2,000 dirs pays ~2 ms, not the ~8 of a dir open and
    // an fstatat each (docs/performance.md, "Newcomer 8").
    return [root](const std::string& dir) {
        auto g = open_beneath(root->get(), dir + "/.git", O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        return g && ::fstat(g->get(), &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
    };
}

std::string secret_line(const std::string& path, const SecretHit& h) {
    std::string s = base::display_path(path) + ":" + std::to_string(h.line) + ": " + h.kind;
    if (!h.shown.empty() && h.kind != "private key") s += " (" + h.shown + ")";
    return s;
}

std::vector<std::string> secret_lines(const RiskContext& ctx) {
    std::vector<std::string> out;
    for (const auto& [path, h] : ctx.secrets) out.push_back(secret_line(path, h));
    return out;
}

}  // namespace review
