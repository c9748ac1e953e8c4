// The patch reader end to end: arbitrary bytes as a patch file, then what
// `show`, `diff` and `apply --dry-run` do with a patch that opened.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "capture/patch/manifest.h"
#include "capture/patch/reader.h"
#include "capture/scan/entry/summary.h"
#include "review/apply/apply.h"
#include "review/diff/source.h"
#include "review/diff/step_groups.h"
#include "tests/fuzz/targets.h"

namespace fuzz {

namespace {

// A scratch target (a few entries for diff and the dry run to meet) and a
// state dir, made once per process.
const std::string& scratch() {
    static const std::string root = [] {
        char tmpl[] = "/tmp/layover-fuzz-XXXXXX";
        std::string r = ::mkdtemp(tmpl) ? tmpl : "/tmp";
        std::string t = r + "/target";
        ::mkdir(t.c_str(), 0755);
        ::mkdir((t + "/docs").c_str(), 0755);
        int fd = ::open((t + "/docs/a.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            (void)!::write(fd, "hello\nworld\n", 12);
            ::close(fd);
        }
        (void)!::symlink("docs/a.txt", (t + "/link").c_str());
        ::mkdir((r + "/state").c_str(), 0700);
        ::setenv("LAYOVER_STATE_DIR", (r + "/state").c_str(), 1);
        return r;
    }();
    return root;
}

}  // namespace

int patch(const uint8_t* data, size_t size) {
    std::string target = scratch() + "/target";
    int fd = ::memfd_create("patch", MFD_CLOEXEC);
    if (fd < 0) return 0;
    if (size && ::write(fd, data, size) != static_cast<ssize_t>(size)) {
        ::close(fd);
        return 0;
    }
    capture::Limits l;  // small, so one input cannot take the fuzzer's memory
    l.max_members = 4096;
    l.max_stored_bytes = 8 << 20;
    l.max_logical_bytes = 1ull << 40;
    l.max_manifest = 1 << 20;
    l.max_pax_header = 64 << 10;
    l.max_sparse_segments = 4096;
    auto p = capture::Patch::open("/proc/self/fd/" + std::to_string(fd), l);
    ::close(fd);
    if (!p.ok()) return 0;
    // show: the summary and --json.
    (void)capture::summary_text(p->manifest().changes);
    (void)capture::changes_to_json_text(p->manifest().changes);
    // The step records (show --steps, the grouped diff's headers).
    std::vector<std::string> paths;
    for (const auto& c : p->manifest().changes) paths.push_back(c.path);
    (void)review::group_by_step(p->manifest().steps, paths);
    // diff: against the scratch target (a patch names any target it likes).
    const_cast<capture::Manifest&>(p->manifest()).target = target;
    review::DiffScope scope;
    scope.max_load = 1 << 20;
    if (auto set = review::collect_diffs(p.value(), scope); set.ok())
        for (const auto& f : set->files) (void)review::render_file(f, review::Style{});
    // apply --dry-run.
    review::ApplyOptions o;
    o.target = target;
    o.dry_run = true;
    (void)review::apply_patch(p.value(), o);
    return 0;
}

}  // namespace fuzz
