#include "helper/sandbox/supervisor/term_filter.h"

#include <array>
#include <cstdint>
#include <cstring>

namespace {

constexpr unsigned char kEsc = 0x1b, kBel = 0x07, kCan = 0x18, kSub = 0x1a, kSt = 0x9c;
constexpr unsigned char kEnq = 0x05;  // ENQ: the terminal sends its answerback message (PuTTY's is "PuTTY")

// After an ESC: what starts no string (OSC, DCS, APC, PM, SOS) nor another ESC.
constexpr std::array<bool, 256> make_esc_passes() {
    std::array<bool, 256> t{};
    for (int i = 0x20; i < 0x7f; i++) t[i] = i != ']' && i != 'P' && i != '_' && i != '^' && i != 'X' && i != '[';
    return t;
}
constexpr std::array<bool, 256> kEscPasses = make_esc_passes();

// What may end a dropped string.
constexpr std::array<bool, 256> make_drop_ends() {
    std::array<bool, 256> t{};
    for (int b : {kBel, kSt, kCan, kSub, kEsc}) t[b] = true;
    return t;
}
constexpr std::array<bool, 256> kDropEnds = make_drop_ends();

bool is_digits(const std::string& s, size_t a, size_t b) {
    if (a == b) return false;
    for (size_t i = a; i < b; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

bool csi_param(unsigned b) { return b >= 0x20 && b <= 0x3f; }  // parameters, private markers, intermediates
bool csi_final(unsigned b) { return b >= 0x40 && b <= 0x7e; }

// Does a whole CSI (parameters up to and including the final byte) ask the
// terminal for an answer? Device attributes (c), status and cursor reports
// (n), DECREQTPARM (x), mode reports (DECRQM, $ p), XTVERSION (> q), the
// graphics attributes (? S), the modify-keys options (? m), the terminal
// state and preferred character set reports ($ u, & u), presentation state
// ($ w), the palette stack's report (XTREPORTCOLORS, # R), the locator
// position (DECRQLP, ' |), and the window size reports (14-16, 18, 19 t: see
// csi_passes).
bool csi_request(const unsigned char* s, size_t len) {
    unsigned fin = s[len - 1], first = len > 1 ? s[0] : 0, inter = len > 1 && s[len - 2] < 0x30 ? s[len - 2] : 0;
    switch (fin) {
        case 'c':
        case 'n':
        case 'x': return inter == 0;
        case 'p':
        case 'w': return inter == '$';
        case 'q': return first == '>' && inter == 0;
        case 'S':
        case 'm': return first == '?' && inter == 0;
        case 'u': return inter == '$' || inter == '&';
        case 'R': return inter == '#';
        case '|': return inter == '\'';
        default: return false;
    }
}

// A whole CSI after its introducer (parameters up to and including the
// final byte): may it reach the terminal? Dropped: the xterm window
// operations (CSI Ps t) that move, resize, iconify, raise or lower the
// window, or report its state, position or title; kept of them, the size
// reports (14-16, 18, 19) and the title stack (22, 23: it only brings back a
// title the host set, as every title set is dropped). The kitty keyboard
// protocol's flag stack (CSI > u push, < u pop, = u set, ? u query): a
// command that pushed and died would leave the user's shell in its keyboard
// mode; without the query's answer a program sees a terminal without it.
// The reads of the screen (DECRQCRA, * y: a checksum per cell spells out
// what the host's screen shows, from before the run too; XTREPORTSGR, # |).
// And, when no one inside reads the answers (answered false: the output-only
// relay, whose answers would land at the user's shell prompt), every request.
bool csi_passes(const unsigned char* s, size_t len, bool answered) {
    unsigned fin = s[len - 1];
    if (len > 1 && ((fin == 'y' && s[len - 2] == '*') || (fin == '|' && s[len - 2] == '#'))) return false;
    if (!answered && csi_request(s, len)) return false;
    if (fin != 't' && fin != 'u') return true;
    bool marker = false;
    for (size_t k = 0; k + 1 < len; k++) {
        if (s[k] < 0x30) return true;  // an intermediate: another sequence (DECSWBV, DECSMBV, DECRARA...)
        marker = marker || s[k] >= 0x3c;
    }
    if (fin == 'u') return !marker;           // plain CSI u: restore the cursor (SCORC)
    if (len > 1 && s[0] == '>') return true;  // xterm's title modes
    unsigned v = 0;
    for (size_t k = 0; k + 1 < len && s[k] >= '0' && s[k] <= '9' && v < 1000; k++) v = v * 10 + (s[k] - '0');
    bool report = v == 14 || v == 15 || v == 16 || v == 18 || v == 19;
    return (report && answered) || v == 22 || v == 23;
}

// Where a complete CSI that passes, ESC [ at p[i], ends; 0 when it is
// incomplete in p, longer than kMaxHeld, holds another byte, or is dropped.
size_t csi_end(const unsigned char* p, size_t i, size_t n, bool answered) {
    size_t j = i + 2;
    while (j < n && csi_param(p[j])) j++;
    if (j >= n || !csi_final(p[j]) || j - i > TermFilter::kMaxHeld) return 0;
    return csi_passes(p + i + 2, j - i - 1, answered) ? j + 1 : 0;
}

// The continuation bytes a UTF-8 lead byte (C0-FF) announces.
unsigned continuations(unsigned lead) { return lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : 1; }

// UTF-8 continuation bytes still expected at p[i] (i >= 3), from the bytes before.
unsigned cont_at(const unsigned char* p, size_t i) {
    for (unsigned k = 1; k <= 3; k++) {
        unsigned b = p[i - k];
        if (b < 0x80) return 0;
        if (b >= 0xc0) {
            unsigned need = continuations(b);
            return need >= k ? need - k + 1 : 0;
        }
    }
    return 0;
}

}  // namespace

// The ground state's bulk: all but ESC starting a string (or at the read's
// end), a C1 control (a 80-9F byte no lead expects, or after a C2 lead) and
// a C2 ending the read. Eight bytes at a time while they hold neither ESC nor
// a 80-9F byte (one byte is always left for the loop below); returns where
// the run ends.
size_t TermFilter::plain_run(const unsigned char* p, size_t i, size_t n) {
    constexpr uint64_t kHigh = 0x8080808080808080ull;
    const size_t start = i;
    unsigned c = cont_;
    while (i < n) {
        size_t j = i;
        for (uint64_t w; j + 8 < n; j += 8) {
            std::memcpy(&w, p + j, 8);
            if ((w & ~(w << 1) & ~(w << 2) & kHigh) || word_has_byte(w, kEsc)) break;  // 80-9F, ESC
            if (!answered_ && word_has_byte(w, kEnq)) break;
        }
        if (j != i) {
            i = j;
            c = cont_at(p, i);
        }
        unsigned b = p[i];
        if (b < 0x80) {
            c = 0;
            if (b == kEnq && !answered_) break;
            if (b == kEsc) {  // a charset, ST...: passes with its next byte; a string's start does not
                if (i + 1 >= n) break;
                if (p[i + 1] == '[') {  // a CSI passes whole when it is all in this read, or is decided in step()
                    size_t end = csi_end(p, i, n, answered_);
                    if (end == 0) break;
                    i = end;
                    continue;
                }
                if (!kEscPasses[p[i + 1]] || (!answered_ && p[i + 1] == 'Z')) break;  // DECID: a request
                i++;
            }
            i++;
        } else if (b < 0xc0) {
            if (c > 0) {
                if (b < 0xa0 && i > start && p[i - 1] == 0xc2) {  // U+0080-U+009F: leave from its C2 on
                    i--;
                    c = 0;
                    break;
                }
                c--;
            } else if (b < 0xa0) {
                break;  // a bare C1 control
            }
            i++;
        } else if (b == 0xc2 && (i + 1 >= n || p[i + 1] < 0xa0 || p[i + 1] > 0xbf)) {
            break;
        } else {
            c = continuations(b);
            i++;
        }
    }
    cont_ = static_cast<unsigned char>(c);
    return i;
}

void TermFilter::feed(const char* in, size_t n, std::string* out) {
    const auto* p = reinterpret_cast<const unsigned char*>(in);
    size_t i = 0;
    while (i < n) {
        if (st_ == St::kGround && !pending_c2_) {
            size_t start = i;
            i = plain_run(p, i, n);
            out->append(in + start, i - start);
            if (i == n) break;
        }
        if (st_ == St::kDrop)
            while (i < n && !kDropEnds[p[i]]) i++;
        if (i < n) step(p[i++], out);
    }
}

void TermFilter::step(unsigned char b, std::string* out) {
    switch (st_) {
        case St::kGround: ground_high(b, out); return;
        case St::kEsc:
            if (b == ']') {
                held_ += ']';
                st_ = St::kOscNum;
                num_ = 0;
            } else if (b == 'P') {
                held_ += 'P';
                st_ = St::kDcsHead;
            } else if (b == '[') {
                held_ += '[';
                st_ = St::kCsi;
            } else if (b == '_' || b == '^' || b == 'X') {  // APC, PM, SOS
                held_.clear();
                st_ = St::kDrop;
            } else if (b == 'Z' && !answered_) {  // DECID asks for the device attributes
                held_.clear();
                st_ = St::kGround;
            } else if ((b < 0x20 && b != kEsc && b != kCan && b != kSub) || b == 0x7f) {
                if (c0_passes(b))
                    out->push_back(static_cast<char>(b));  // a terminal runs a C0 (ignores DEL) and stays after the ESC
            } else {
                out->append(held_);  // ESC starting anything else: CSI, charsets, ST...
                held_.clear();
                st_ = St::kGround;
                if (b == kEsc) {
                    held_ = "\x1b";
                    st_ = St::kEsc;
                } else if (b < 0x80) {
                    out->push_back(static_cast<char>(b));
                } else {
                    ground_high(b, out);
                }
            }
            return;
        case St::kOscNum: osc_header(b, out); return;
        case St::kOscQuery:
            if (b == kBel || b == kSt) {
                held_ += static_cast<char>(b);
                if (query_ok()) out->append(held_);
                held_.clear();
                st_ = St::kGround;
            } else if (b == kEsc) {
                held_ += static_cast<char>(b);
                st_ = St::kOscQueryEsc;
            } else if (b < 0x20 || b > 0x7e || held_.size() >= kMaxHeld) {
                held_.clear();
                st_ = St::kDrop;
                step(b, out);
            } else {
                held_ += static_cast<char>(b);
            }
            return;
        case St::kOscQueryEsc:
            if (b == '\\') {
                held_ += '\\';
                if (query_ok()) out->append(held_);
                held_.clear();
                st_ = St::kGround;
            } else {  // the ESC ended the query unterminated (dropped) and starts a sequence
                held_ = "\x1b";
                st_ = St::kEsc;
                step(b, out);
            }
            return;
        case St::kDcsHead: dcs_header(b, out); return;
        case St::kCsi:
        case St::kCsiDrop: csi(b, out); return;
        case St::kDrop:
            if (b == kBel || b == kSt || b == kCan || b == kSub) st_ = St::kGround;
            if (b == kEsc) st_ = St::kDropEsc;
            return;
        case St::kDropEsc:
            if (b == '\\') {
                st_ = St::kGround;
            } else {
                held_ = "\x1b";
                st_ = St::kEsc;
                step(b, out);
            }
            return;
    }
}

// ESC or a byte >= 0x80 in the ground state.
void TermFilter::ground_high(unsigned char b, std::string* out) {
    if (pending_c2_) {
        pending_c2_ = false;
        if (b >= 0x80 && b <= 0x9f) {  // U+0080-U+009F: a C1 control, UTF-8 encoded
            const char intro[2] = {'\xc2', static_cast<char>(b)};
            cont_ = 0;
            c1(b, intro, 2, out);
            return;
        }
        out->push_back('\xc2');
        cont_ = 1;
    }
    if (b == kEsc) {
        cont_ = 0;
        held_ = "\x1b";
        st_ = St::kEsc;
    } else if (b < 0x80) {
        cont_ = 0;
        if (c0_passes(b)) out->push_back(static_cast<char>(b));
    } else if (b < 0xc0) {
        if (cont_ > 0) {
            cont_--;
            out->push_back(static_cast<char>(b));
        } else if (b <= 0x9f) {  // a bare 8-bit C1 control
            const char intro[1] = {static_cast<char>(b)};
            c1(b, intro, 1, out);
        } else {
            out->push_back(static_cast<char>(b));
        }
    } else if (b == 0xc2) {
        pending_c2_ = true;
    } else {
        cont_ = static_cast<unsigned char>(continuations(b));
        out->push_back(static_cast<char>(b));
    }
}

void TermFilter::c1(unsigned char b, const char* intro, size_t len, std::string* out) {
    if (b == 0x9d) {  // OSC
        held_.assign(intro, len);
        st_ = St::kOscNum;
        num_ = 0;
    } else if (b == 0x90) {  // DCS
        held_.assign(intro, len);
        st_ = St::kDcsHead;
    } else if (b == 0x9b) {  // CSI
        held_.assign(intro, len);
        st_ = St::kCsi;
    } else if (b == 0x9f || b == 0x9e || b == 0x98) {  // APC, PM, SOS
        st_ = St::kDrop;
    } else if (b != 0x9a || answered_) {  // 0x9A: DECID in its 8-bit form, a request
        out->append(intro, len);
    }
}

// A CSI's parameters up to its final byte, held (kCsi) or, past kMaxHeld,
// swallowed (kCsiDrop). Like a terminal: a C0 inside runs at once, ESC, CAN
// and SUB end it unfinished (nothing of it shown), DEL is ignored; any other
// byte ends it too.
void TermFilter::csi(unsigned char b, std::string* out) {
    if (csi_param(b)) {
        if (st_ == St::kCsi && held_.size() < kMaxHeld) {
            held_ += static_cast<char>(b);
        } else {
            held_.clear();
            st_ = St::kCsiDrop;
        }
    } else if (csi_final(b)) {
        size_t start = held_[0] == '\x1b' || held_[0] == '\xc2' ? 2 : 1;
        held_ += static_cast<char>(b);
        if (st_ == St::kCsi &&
            csi_passes(reinterpret_cast<const unsigned char*>(held_.data()) + start, held_.size() - start, answered_))
            out->append(held_);
        held_.clear();
        st_ = St::kGround;
    } else if (b == kEsc) {
        held_ = "\x1b";
        st_ = St::kEsc;
    } else if (b < 0x20 && b != kCan && b != kSub) {
        if (c0_passes(b)) out->push_back(static_cast<char>(b));
    } else if (b != 0x7f) {
        held_.clear();
        st_ = St::kGround;
        if (b == kCan || b == kSub) out->push_back(static_cast<char>(b));
        else ground_high(b, out);
    }
}

// The OSC's number, up to its ';': decides whether it passes, is dropped, or is a query to check whole.
void TermFilter::osc_header(unsigned char b, std::string* out) {
    if (b >= '0' && b <= '9' && held_.size() < 16) {
        held_ += static_cast<char>(b);
        num_ = num_ * 10 + (b - '0');
        return;
    }
    if (b == ';' && num_ == 8 && held_.back() != ']' && held_.back() != '\x9d') {  // a hyperlink
        held_ += ';';
        out->append(held_);
        held_.clear();
        st_ = St::kGround;
        return;
    }
    bool digits = held_.back() >= '0' && held_.back() <= '9';
    if (b == ';' && digits && answered_ && (num_ == 4 || num_ == 5 || (num_ >= 10 && num_ <= 19))) {
        held_ += ';';
        payload_ = held_.size();
        st_ = St::kOscQuery;
        return;
    }
    held_.clear();
    st_ = St::kDrop;
    if (b != ';') step(b, out);  // a terminator ends it here
}

// DCS: parameters and intermediates up to the final byte. Sixel (q), DECRQSS ($q), XTGETTCAP (+q) pass.
void TermFilter::dcs_header(unsigned char b, std::string* out) {
    if (b >= 0x20 && b <= 0x3f && held_.size() < 32) {
        held_ += static_cast<char>(b);
        return;
    }
    if (b == 'q') {
        size_t start = held_[0] == '\x1b' || held_[0] == '\xc2' ? 2 : 1;
        std::string head = held_.substr(start);
        bool sixel = head.find_first_not_of("0123456789;") == std::string::npos;
        if (sixel || (answered_ && (head == "$" || head == "+"))) {
            held_ += 'q';
            out->append(held_);
            held_.clear();
            st_ = St::kGround;
            return;
        }
    }
    held_.clear();
    st_ = St::kDrop;
    if (b < 0x20 || b > 0x7e) step(b, out);  // a terminator or ESC ends it here
}

// Every item a "?" (OSC 10-19), or index;? pairs (OSC 4, 5): the terminal only answers, into the sandbox's pty.
bool TermFilter::query_ok() const {
    size_t end = held_.size() - 1;
    if (held_[end] == '\\') end--;  // ESC \ as ST
    bool pairs = num_ == 4 || num_ == 5;
    size_t item = 0;
    for (size_t a = payload_; a <= end; item++) {
        size_t b = held_.find(';', a);
        if (b == std::string::npos || b > end) b = end;
        bool index = pairs && item % 2 == 0;
        if (index ? !is_digits(held_, a, b) : !(b == a + 1 && held_[a] == '?')) return false;
        a = b + 1;
    }
    return item > 0 && (!pairs || item % 2 == 0);
}
