#include "tests/unit/capture_scan_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>

#include "helper/base/fd.h"
#include "tests/unit/capture_tree.h"

capture::ScanResult scan_dirs(const std::string& upper, const std::string& lower) {
    capture::ScanOptions o;
    o.with_base = true;
    return scan_dirs(upper, lower, o);
}

ScanPair::ScanPair() {
    ::mkdir(up.c_str(), 0755);
    ::mkdir(low.c_str(), 0755);
}

capture::ScanResult scan_dirs(const std::string& upper, const std::string& lower, const capture::ScanOptions& o) {
    auto up = base::open_at(AT_FDCWD, upper, O_RDONLY | O_DIRECTORY);
    auto low = base::open_at(AT_FDCWD, lower, O_RDONLY | O_DIRECTORY);
    if (!up || !low) throw std::runtime_error("opening test trees");
    auto r = capture::scan_upper(up->get(), low->get(), o);
    if (!r) throw std::runtime_error("scan failed: " + r.error().message);
    return std::move(r.value());
}

capture::ScanResult scan_case(const std::string& upper_spec, const std::string& lower_spec) {
    testtree::TempDir t;
    std::string up = t.path + "/up", low = t.path + "/low";
    ::mkdir(up.c_str(), 0755);
    ::mkdir(low.c_str(), 0755);
    testtree::make(up + "/e", upper_spec);
    testtree::make(low + "/e", lower_spec);
    if (upper_spec == "dir" || upper_spec == "opaque") testtree::make(up + "/e/new-child", "file:new\n");
    if (lower_spec == "dir") testtree::make(low + "/e/old-child", "file:old\n");
    return scan_dirs(up, low);
}

bool has_base(const capture::ScanResult& r, const std::string& path) {
    for (const auto& b : r.base)
        if (b.path == path && !b.absent) return true;
    return false;
}

bool base_absent(const capture::ScanResult& r, const std::string& path) {
    for (const auto& b : r.base)
        if (b.path == path && b.absent) return true;
    return false;
}
