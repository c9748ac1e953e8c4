// Scan helpers for the capture unit tests.
#pragma once
#include <string>

#include "capture/scan/walk/scan.h"
#include "tests/unit/capture_tree.h"

// Build up/e from upper_spec and low/e from lower_spec (see testtree::make)
// in a fresh temp dir, then scan with base records. An upper dir or opaque
// dir gets a child "new-child"; a lower dir gets a child "old-child".
capture::ScanResult scan_case(const std::string& upper_spec, const std::string& lower_spec);
// Scan two existing trees (with base records, or with the options given).
capture::ScanResult scan_dirs(const std::string& upper, const std::string& lower);
capture::ScanResult scan_dirs(const std::string& upper, const std::string& lower, const capture::ScanOptions& o);

// A fresh temp dir holding the empty dirs up/ and low/.
struct ScanPair {
    testtree::TempDir t;
    std::string up = t.path + "/up", low = t.path + "/low";
    ScanPair();
};
bool has_base(const capture::ScanResult& r, const std::string& path);
bool base_absent(const capture::ScanResult& r, const std::string& path);
