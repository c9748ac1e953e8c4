#include "capture/scan/walk/scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/scan/walk/walker.h"

namespace capture {

using base::Result;

std::string join_path(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

Result<std::vector<DirEnt>> list_real_dir(int dirfd, const std::string& what) {
    auto names = base::list_dir(dirfd);
    if (!names) return names.error().context("listing " + what);
    return names;
}

void append_changes(ScanResult* scan, std::vector<Change>* to) {
    size_t i = 0;
    auto items_to = [&](size_t end) {
        for (; i < end; i++) to->push_back(std::move(scan->items[i].change));
    };
    for (auto& p : scan->pieces) {
        items_to(p.at);
        for (auto& c : p.changes) to->push_back(std::move(c));
    }
    items_to(scan->items.size());
    scan->items.clear();
    scan->pieces.clear();
}

std::vector<Change> take_changes(ScanResult* scan) {
    std::vector<Change> out;
    // The walk's one line of changes, first in walk order: it is the list
    // (a status of 10,000 changes moved them all again here: 1.7 MB of fresh pages).
    auto& ps = scan->pieces;
    if (ps.size() == 1 && ps[0].at == 0 && ps[0].changes.capacity() >= ps[0].changes.size() + scan->items.size()) {
        out = std::move(ps[0].changes);
        ps.clear();
        append_changes(scan, &out);
        return out;
    }
    size_t n = scan->items.size();
    for (const auto& p : ps) n += p.changes.size();
    out.reserve(n);
    append_changes(scan, &out);
    return out;
}

Result<ScanResult> scan_upper(int upper_fd, int lower_fd, const ScanOptions& opts) {
    return scan_layers({upper_fd}, lower_fd, opts);
}

Result<ScanResult> scan_layers(const std::vector<int>& layer_fds, int lower_fd, const ScanOptions& opts) {
    ScanResult out;
    Walker w(opts, &out);
    w.spare_cpu = opts.threads == 0 ? ::sysconf(_SC_NPROCESSORS_ONLN) > 1 : opts.threads > 1;
    UpperDir root;
    root.fds = layer_fds;
    for (uint32_t i = 0; i < layer_fds.size(); i++) {
        root.ids.push_back(i);
        root.idx.push_back(i < opts.indexes.size() && opts.indexes[i] ? opts.indexes[i]->find("") : nullptr);
    }
    struct statx real {};
    if (::statx(lower_fd, "", AT_EMPTY_PATH, STATX_CTIME, &real) == 0 && (real.stx_mask & STATX_CTIME))
        w.real_dir_ns = ns_of(real.stx_ctime);
    TRY_VOID(w.dir(root, lower_fd, "", nullptr));
    return out;
}

}  // namespace capture
