// Scan helpers for the capture unit tests.
#pragma once
#include <string>

#include "capture/scan/scan.h"

// Build up/e from upper_spec and low/e from lower_spec (see testtree::make)
// in a fresh temp dir, then scan with base records. An upper dir or opaque
// dir gets a child "new-child"; a lower dir gets a child "old-child".
capture::ScanResult scan_case(const std::string& upper_spec, const std::string& lower_spec);
// Scan two existing trees.
capture::ScanResult scan_dirs(const std::string& upper, const std::string& lower);
bool has_base(const capture::ScanResult& r, const std::string& path);
bool base_absent(const capture::ScanResult& r, const std::string& path);
