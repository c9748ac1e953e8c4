#include "review/apply/progress.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>

#include "helper/base/term.h"

namespace review {
namespace {

int64_t now_ns() {
    struct timespec ts {};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

Progress::Progress(bool enabled) : enabled_(enabled && base::live_output(2)), start_ns_(now_ns()) {}

Progress::~Progress() { done(); }

void Progress::set_total(uint64_t bytes, uint64_t entries) {
    total_bytes_ = bytes;
    total_entries_ = entries;
}

void Progress::add(uint64_t bytes, uint64_t entries) {
    if (!enabled_) return;  // nothing is drawn: no lock shared by staging's writers, twice a file
    std::lock_guard<std::mutex> l(mu_);
    bytes_ += bytes;
    entries_ += entries;
    draw();
}

void Progress::phase(const char* what) {
    phase_ = what;
    draw();
}

void Progress::draw() {
    if (!enabled_) return;
    int64_t t = now_ns();
    if (t - start_ns_ < 1000000000 || t - last_ns_ < 100000000) return;
    last_ns_ = t;
    shown_ = true;
    double mib = double(bytes_) / (1 << 20), total = double(total_bytes_) / (1 << 20);
    std::fprintf(stderr, "\r\033[Klayover: %s: %llu/%llu entries, %.1f/%.1f MiB", phase_,
                 static_cast<unsigned long long>(entries_), static_cast<unsigned long long>(total_entries_), mib,
                 total);
    std::fflush(stderr);
}

void Progress::done() {
    if (shown_) std::fputs("\r\033[K", stderr);
    shown_ = false;
}

}  // namespace review
