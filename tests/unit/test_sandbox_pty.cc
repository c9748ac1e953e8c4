#include <catch2/catch.hpp>
#include <string>

#include "helper/sandbox/pty_relay.h"

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
