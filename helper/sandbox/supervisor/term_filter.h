// The relayed output of a run at a terminal (interactive or output-only,
// pty_relay.h) passes through a TermFilter on its way to the user's terminal. It drops the control strings that reach
// past the screen into the host (docs/security.md, "Terminal control
// strings"): OSC 52 (the clipboard), OSC 7/9/777/633/1337 (cwd, notifications,
// iTerm2 file transfer...), palette and colour changes and resets (OSC 4/5,
// 10-19, 104, 110-119: they outlive the run), the window title (OSC 0/1/2,
// which outlives it too), DCS other than sixel and the DECRQSS/XTGETTCAP
// requests (so tmux passthrough and DECUDK key definitions), APC/PM/SOS
// (the kitty graphics protocol reads host files), the xterm window operations
// but the size reports and title stack (CSI Ps t) and the kitty keyboard
// protocol (CSI > u, < u, = u, ? u), the reads of the screen (DECRQCRA,
// XTREPORTSGR). Kept: OSC 8 hyperlinks, the OSC 4/5/10-19 queries and the
// other requests (the answer goes into the sandbox's own pty), the rest of
// CSI (colours, cursor) and all plain text. A filter made with answered
// false (the output-only relay: the answers would reach the user's shell
// prompt, not the command) drops every request too, ENQ (the answerback) among them.
//
// Pure and stateful: sequences split across reads are handled; only an
// introducer and a short header (at most kMaxHeld bytes) are held back; a
// dropped string is discarded as it streams, never buffered. The 7-bit
// forms (ESC ] / ESC P / ESC _ ^ X / ESC [, ST as ESC \ or BEL), the 8-bit C1 forms
// (0x9D, 0x90, 0x9F, 0x9E, 0x98, 0x9B, 0x9C) when not inside a UTF-8 character,
// and the UTF-8 encoded C1 (U+009D: C2 9D, ...) are all recognised.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

// Does the 8-byte word w hold the byte c? (The relay's scans, 8 bytes at a time.)
inline bool word_has_byte(uint64_t w, unsigned char c) {
    constexpr uint64_t kOnes = 0x0101010101010101ull;
    uint64_t x = w ^ (kOnes * c);  // a zero byte where w has c
    return ((x - kOnes) & ~x & (kOnes * 0x80)) != 0;
}

class TermFilter {
public:
    static constexpr size_t kMaxHeld = 256;  // an OSC query longer than this is dropped
    explicit TermFilter(bool answered = true) : answered_(answered) {}
    // Append what of in[0, n) may reach the terminal to *out.
    void feed(const char* in, size_t n, std::string* out);

private:
    enum class St : unsigned char {
        kGround,
        kEsc,
        kOscNum,
        kOscQuery,
        kOscQueryEsc,
        kDcsHead,
        kDrop,
        kDropEsc,
        kCsi,
        kCsiDrop
    };
    size_t plain_run(const unsigned char* p, size_t i, size_t n);
    void step(unsigned char b, std::string* out);
    void ground_high(unsigned char b, std::string* out);
    void c1(unsigned char b, const char* intro, size_t len, std::string* out);
    void osc_header(unsigned char b, std::string* out);
    void dcs_header(unsigned char b, std::string* out);
    void csi(unsigned char b, std::string* out);
    bool query_ok() const;
    bool c0_passes(unsigned char b) const { return b != 0x05 || answered_; }  // ENQ asks for the answerback

    bool answered_;  // does someone read the terminal's answers (the command, through its pty)?
    St st_ = St::kGround;
    unsigned char cont_ = 0;   // UTF-8 continuation bytes still expected
    bool pending_c2_ = false;  // a C2 lead held back: is it a UTF-8 encoded C1?
    unsigned num_ = 0;         // the OSC's number
    size_t payload_ = 0;       // where an OSC query's payload starts in held_
    std::string held_;         // an introducer and header not yet decided
};
