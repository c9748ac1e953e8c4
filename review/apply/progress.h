// A one-line progress display on stderr, for work that takes over a second,
// only when stderr is a terminal.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>

namespace review {

class Progress {
public:
    explicit Progress(bool enabled);
    ~Progress();
    void set_total(uint64_t bytes, uint64_t entries);
    void add(uint64_t bytes, uint64_t entries);
    void phase(const char* what);
    void done();  // erase the line

private:
    void draw();
    std::mutex mu_;  // add() comes from staging's writer threads too
    const bool enabled_;
    bool shown_ = false;
    const char* phase_ = "applying";
    uint64_t bytes_ = 0, entries_ = 0, total_bytes_ = 0, total_entries_ = 0;
    int64_t start_ns_, last_ns_ = 0;
};

}  // namespace review
