#include <catch2/catch.hpp>
#include <string>

#include "helper/sandbox/supervisor/pty_relay.h"

namespace {

bool changes(const std::string& s, unsigned char* prev) { return may_change_terminal(s.data(), s.size(), prev); }

}  // namespace

TEST_CASE("pty relay: output that may change the terminal's state is told from plain text", "[pty]") {
    unsigned char prev = 0;
    CHECK_FALSE(changes("plain text, tabs\t and\r\n newlines, UTF-8 \xc3\xa9 \xe2\x80\x94 \xe2\x82\xac", &prev));
    CHECK_FALSE(changes("\x07\x08", &prev));  // bell, backspace: no state left behind
    prev = 0;
    CHECK(changes("\x1b[8m", &prev));
    prev = 0;
    CHECK(changes("x\x0e", &prev));  // shift-out to the G1 charset
    prev = 0;
    CHECK(
        changes("c1 \xc2\x9b"
                "31m",
                &prev));  // U+009B, CSI
    // A C1 split across two reads is still seen.
    prev = 0;
    CHECK_FALSE(changes("ends in \xc2", &prev));
    CHECK(
        changes("\x9b"
                "2J",
                &prev));
    // Continuation bytes in that range after another lead byte are text.
    prev = 0;
    CHECK_FALSE(changes("\xe2\x80\x9c quoted \xe2\x80\x9d", &prev));
}

TEST_CASE("pty relay: an escape is seen at any offset of a long read", "[pty]") {
    for (int k = 0; k < 40; k++) {
        std::string text(static_cast<size_t>(k), 'a');
        text += "\xc3\xa9\xe2\x80\x94";
        CAPTURE(k);
        unsigned char prev = 0;
        CHECK_FALSE(changes(text + text, &prev));
        prev = 0;
        CHECK(changes(text + "\x1b[8m" + text, &prev));
        prev = 0;
        CHECK(changes(text + "\x0e" + text, &prev));
        prev = 0;
        CHECK(changes(text + "\xc2\x9b" + text, &prev));
        prev = 0;
        CHECK_FALSE(changes(text + "\xc2\xa0" + text, &prev));  // a no-break space
        prev = 0;
        CHECK_FALSE(changes(text + "\xc2", &prev));
        CHECK(changes("\x9b" + text, &prev));
    }
}

TEST_CASE("pty relay: the word-at-a-time scan agrees with a byte-at-a-time one", "[pty]") {
    const char* pieces[] = {"a", "bcdefghij", "\x1b", "\x0e", "\xc2", "\x9b", "\xa0", "\xc3\xa9", "\xe2\x80\x94"};
    unsigned seed = 7;
    for (int t = 0; t < 3000; t++) {
        std::string s;
        int len = 1 + static_cast<int>((seed = seed * 1103515245u + 12345u) >> 16) % 12;
        for (int k = 0; k < len; k++) {
            unsigned r = (seed = seed * 1103515245u + 12345u) >> 16;
            s += pieces[r % 9];
        }
        bool want = false;
        unsigned char p = 0;
        for (unsigned char c : s) {
            if (c == 0x1b || c == 0x0e || (p == 0xc2 && c >= 0x80 && c <= 0x9f)) want = true;
            p = c;
        }
        unsigned char prev = 0;
        CAPTURE(s);
        CHECK(changes(s, &prev) == want);
    }
}

TEST_CASE("pty relay: a terminal on stdout or stderr alone gets an output-only pty for just those fds", "[pty]") {
    // Interactive: the pty is all three.
    CHECK(pty_fds_for_terminals(true, true, true) == 7);
    CHECK(pty_fds_for_terminals(true, false, false) == 7);
    // stdin piped (`echo x | layover run -- cmd`): only the terminal fds, never stdin.
    CHECK(pty_fds_for_terminals(false, true, true) == 6);
    CHECK(pty_fds_for_terminals(false, true, false) == 2);
    CHECK(pty_fds_for_terminals(false, false, true) == 4);  // `cmd > file` under a terminal
    // No terminal at all (the bench's start-up rows, an agent): no pty.
    CHECK(pty_fds_for_terminals(false, false, false) == 0);
}
