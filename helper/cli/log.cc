// `layover log [SESSION] [--json]`: a session's steps, newest first, with the
// live upper as (live) (docs/history.md).
#include <fcntl.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "helper/base/json/bytes.h"
#include "helper/base/text.h"
#include "helper/store/owner_ns.h"
#include "helper/store/session.h"
#include "helper/store/steps.h"
#include "helper/store/usage.h"

namespace {

constexpr const char* kUsage = "usage: layover log [SESSION] [--json]   the session's steps, newest first";

int fail(const std::string& msg) {
    std::fprintf(stderr, "layover: %s\n", msg.c_str());
    return 1;
}

struct Row {
    steps::Record rec;
    bool live = false;
    uint64_t bytes = 0;
    int added = 0, modified = 0, deleted = 0;
};

uint64_t layer_bytes(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? 0 : session::tree_usage(fd).bytes;
}

void count(Row* r) {
    for (const auto& t : r->rec.paths) {
        if (t.kind == "A") r->added++;
        else if (t.kind == "D") r->deleted++;
        else r->modified++;
    }
}

// The live upper's touched paths, read as the session's owner (the program
// may have left mode-000 dirs), in a child; JSON back through the pipe.
base::Result<steps::Record> live_record(const session::Info& s, int frozen) {
    auto text = capture::in_owner_ns([&]() -> base::Result<std::string> {
        steps::Record r;
        r.n = frozen + 1;
        TRY(r.paths, steps::touched_layer(session::upper_dir(s.dir), s.dir, frozen, s.meta.target));
        return steps::record_to_text(r);
    });
    if (!text) return text.error();
    TRY(steps::Record r, steps::record_from_text(text.value()));
    auto live = steps::read_live(s.dir);
    if (live) {
        r.label = live->label;
        r.start = live->start;
    }
    return r;
}

}  // namespace

int cmd_log(int argc, char** argv) {
    bool json = false;
    std::string name;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--json") {
            json = true;
        } else if (a == "-h" || a == "--help") {
            std::puts(kUsage);
            std::puts("  --json   one JSON object: the session and its steps, each with its touched paths");
            return 0;
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "layover log: unknown option %s\n%s\n", a.c_str(), kUsage);
            return 2;
        } else if (name.empty()) {
            name = a;
        } else {
            std::fprintf(stderr, "%s\n", kUsage);
            return 2;
        }
    }
    auto state = session::state_dir();
    if (!state) return fail(state.error().message);
    auto s = session::find(state.value(), name);
    if (!s) return fail(s.error().message);
    auto recs = steps::read_all(s->dir);
    if (!recs) return fail("session '" + s->meta.name + "': " + recs.error().message);
    std::vector<Row> rows;
    auto live = live_record(s.value(), static_cast<int>(recs->size()));
    if (!live) return fail("session '" + s->meta.name + "': reading the live layer: " + live.error().message);
    if (!live->paths.empty()) {
        Row r;
        r.rec = std::move(live.value());
        r.live = true;
        r.bytes = layer_bytes(session::upper_dir(s->dir));
        rows.push_back(std::move(r));
    }
    for (auto it = recs->rbegin(); it != recs->rend(); ++it) {
        Row r;
        r.rec = std::move(*it);
        r.bytes = layer_bytes(steps::layer_dir(s->dir, r.rec.n));
        rows.push_back(std::move(r));
    }
    for (auto& r : rows) count(&r);
    if (json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& r : rows) {
            nlohmann::json paths = nlohmann::json::array();
            for (const auto& t : r.rec.paths) {
                nlohmann::json o = base::json::path_object(t.path);
                o["kind"] = t.kind;
                paths.push_back(std::move(o));
            }
            arr.push_back({{"step", r.live ? nlohmann::json(nullptr) : nlohmann::json(r.rec.n)},
                           {"live", r.live},
                           {"label", r.rec.label},
                           {"start", r.rec.start},
                           {"end", r.rec.end},
                           {"added", r.added},
                           {"modified", r.modified},
                           {"deleted", r.deleted},
                           {"bytes", r.bytes},
                           {"recorded", !r.rec.missing},
                           {"paths", std::move(paths)}});
        }
        nlohmann::json top = {{"session", s->meta.name}, {"steps", std::move(arr)}};
        std::puts(top.dump(2, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
        return 0;
    }
    std::printf("session '%s': %zu step%s%s\n", base::display_path(s->meta.name).c_str(), recs->size(),
                recs->size() == 1 ? "" : "s", rows.empty() || !rows[0].live ? "" : " and live changes");
    for (const auto& r : rows) {
        std::string num = r.live ? "(live)" : std::to_string(r.rec.n);
        std::string when = r.live ? r.rec.start : r.rec.end;
        std::string counts =
            "+" + std::to_string(r.added) + " ~" + std::to_string(r.modified) + " -" + std::to_string(r.deleted);
        std::printf("%6s  %-20s  %-14s %10s B  %s\n", num.c_str(), when.empty() ? "-" : when.c_str(), counts.c_str(),
                    base::thousands(r.bytes).c_str(), base::display_path(r.rec.label).c_str());
    }
    return 0;
}
