#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "helper/sandbox/supervisor/term_filter.h"

namespace {

// Feed `parts` as separate reads; what reaches the terminal.
std::string run(const std::vector<std::string>& parts) {
    TermFilter f;
    std::string out;
    for (const auto& p : parts) f.feed(p.data(), p.size(), &out);
    return out;
}
std::string run1(const std::string& s) { return run({s}); }
// Every split into single bytes gives the same result as one read.
std::string bytewise(const std::string& s) {
    std::vector<std::string> parts;
    for (char c : s) parts.emplace_back(1, c);
    return run(parts);
}

}  // namespace

TEST_CASE("term filter: plain text, colours, cursor moves and UTF-8 pass unchanged", "[pty]") {
    std::string s =
        "plain\r\n\t\x1b[1;31mred\x1b[m \x1b[2J\x1b[H \x1b(B \x1b"
        "7 \x1b[?1049h "
        "\xc3\xa9 \xe2\x80\x94 \xd0\x9d \xc3\x9d \xc2\xb0 \xf0\x9f\x98\x80 \x07";
    CHECK(run1(s) == s);
    CHECK(bytewise(s) == s);
    std::string st =
        "\x1b\\ \x1b"
        "c";  // a lone ST, RIS
    CHECK(run1(st) == st);
}

TEST_CASE("term filter: OSC 52 (the clipboard) is dropped in every form", "[pty]") {
    CHECK(run1("a\x1b]52;c;ZWNobyBwd25lZAo=\x07"
               "b") == "ab");
    CHECK(run1("a\x1b]52;c;ZWNobyBwd25lZAo=\x1b\\b") == "ab");
    CHECK(run1("a\x9d"
               "52;c;ZWNobw==\x9c"
               "b") == "ab");  // 8-bit C1 OSC and ST
    CHECK(run1("a\xc2\x9d"
               "52;c;ZWNobw==\xc2\x9c"
               "b") == "ab");                                     // UTF-8 encoded C1
    CHECK(run1("a\x1b]52;c;ZWNobw==\x1b[31mb") == "a\x1b[31mb");  // ended by another sequence
    CHECK(run1("a\x1b]52;c;ZWNo\x18"
               "b") == "ab");  // CAN aborts it
    CHECK(bytewise("a\x1b]52;c;ZWNobw==\x1b\\b") == "ab");
    CHECK(bytewise("a\xc2\x9d"
                   "52;c;ZWNobw==\x07"
                   "b") == "ab");
    CHECK(run({"a\x1b", "]5", "2;c;ZW", "Nobw==\x1b", "\\b"}) == "ab");
}

TEST_CASE("term filter: other host-reaching OSCs are dropped, hyperlinks pass", "[pty]") {
    for (const char* n : {"0",
                          "1",
                          "2",
                          "4;1;rgb:ff/00/00",
                          "5;0;red",
                          "7;file://h/tmp",
                          "9;hi",
                          "10;#ffffff",
                          "11;red",
                          "104",
                          "110",
                          "112",
                          "133;A",
                          "633;E;rm -rf ~",
                          "777;notify;a;b",
                          "1337;File=name=eA==;inline=0:ZWNobw==",
                          "50;fixed",
                          "",
                          "x",
                          "8"}) {
        CAPTURE(n);
        CHECK(run1(std::string("a\x1b]") + n +
                   "\x07"
                   "b") == "ab");
        CHECK(bytewise(std::string("a\x1b]") + n + "\x1b\\b") == "ab");
    }
    std::string link = "\x1b]8;;https://example.com\x1b\\text\x1b]8;;\x1b\\";
    CHECK(run1(link) == link);
    CHECK(bytewise(link) == link);
    // A hyperlink's URL is still scanned: an OSC 52 inside it is dropped.
    CHECK(run1("\x1b]8;;http://x\x1b]52;c;QQ==\x07") == "\x1b]8;;http://x");
}

TEST_CASE("term filter: colour queries pass (the answer goes into the sandbox), settings do not", "[pty]") {
    for (const char* q :
         {"\x1b]10;?\x07", "\x1b]11;?\x1b\\", "\x1b]10;?;?\x07", "\x1b]4;1;?\x07", "\x1b]4;1;?;2;?\x07"}) {
        CAPTURE(q);
        CHECK(run1(q) == q);
        CHECK(bytewise(q) == q);
    }
    for (const char* q : {"\x1b]10;?;red\x07", "\x1b]4;1;?;2;red\x07", "\x1b]4;1\x07", "\x1b]4;?\x07", "\x1b]11;\x07",
                          "\x1b]10;?;\x07"}) {
        CAPTURE(q);
        CHECK(run1(std::string("a") + q + "b") == "ab");
    }
}

TEST_CASE("term filter: DCS passes only for sixel and requests; tmux passthrough is dropped", "[pty]") {
    // What is left of the wrapped sequence is ESCs and lone STs (ESC \\): they change nothing.
    CHECK(run1("a\x1bPtmux;\x1b\x1b]52;c;QQ==\x07\x1b\\b") == "a\x1b\x1b\\b");
    CHECK(bytewise("a\x1bPtmux;\x1b\x1b]52;c;QQ==\x1b\x1b\\\x1b\\b") == "a\x1b\x1b\x1b\\\x1b\\b");
    CHECK(run1("a\x1bP0;1|17/ZWNobwo=\x1b\\b") == "ab");  // DECUDK: defines a function key
    CHECK(run1("a\x90tmux;x\x9c"
               "b") == "ab");
    std::string ok = "\x1bP$qm\x1b\\\x1bP+q544e\x1b\\\x1bPq#0;2;0;0;0~-\x1b\\";
    CHECK(run1(ok) == ok);
    CHECK(bytewise(ok) == ok);
}

TEST_CASE("term filter: APC, PM and SOS (kitty graphics) are dropped", "[pty]") {
    CHECK(run1("a\x1b_Gf=100,t=f;L2V0Yy9wYXNzd2Q=\x1b\\b") == "ab");
    CHECK(run1("a\x1b^pm\x1b\\b\x1bXsos\x1b\\c") == "abc");
    CHECK(run1("a\x9f"
               "apc\x9c"
               "b") == "ab");
}

TEST_CASE("term filter: what is held back is bounded", "[pty]") {
    TermFilter f;
    std::string out;
    f.feed("a\x1b", 2, &out);
    CHECK(out == "a");  // only the ESC waits for the next read
    f.feed("[m", 2, &out);
    CHECK(out == "a\x1b[m");
    // An unterminated OSC 52 of 1 MiB: nothing of it is kept or shown; what follows its end is.
    TermFilter g;
    out.clear();
    std::string s = "\x1b]52;c;";
    g.feed(s.data(), s.size(), &out);
    std::string junk(1 << 20, 'Q');
    g.feed(junk.data(), junk.size(), &out);
    CHECK(out.empty());
    g.feed("\x07ok", 3, &out);
    CHECK(out == "ok");
    // A query longer than kMaxHeld is dropped, not buffered on.
    std::string q = "\x1b]10;" + std::string(TermFilter::kMaxHeld, '?') +
                    "\x07"
                    "b";
    CHECK(run1(q) == "b");
    std::string num = "\x1b]" + std::string(100, '1') +
                      ";x\x07"
                      "b";
    CHECK(run1(num) == "b");
}

TEST_CASE("term filter: any split of the output into reads gives the same result", "[pty]") {
    const char* tokens[] = {"a",
                            "\xc3\xa9",
                            "\x1b",
                            "]",
                            "52",
                            ";",
                            "c;QQ==",
                            "\x07",
                            "\\",
                            "P",
                            "tmux;",
                            "\x9d",
                            "\xc2",
                            "\x9c",
                            "8",
                            "10",
                            "?",
                            "[31m",
                            "_",
                            "q",
                            "aaaaaaaaaaa",
                            "\xe2\x80\x94",
                            "\xd0\x9d",
                            "\xc2\xb0",
                            "\xf0\x9f\x98\x80",
                            "[",
                            "2",
                            "t",
                            ">1u",
                            "\x9b",
                            "\x18",
                            "\r"};
    unsigned seed = 12345;
    auto rnd = [&seed](unsigned m) {
        seed = seed * 1103515245u + 12345u;
        return (seed >> 16) % m;
    };
    for (int t = 0; t < 5000; t++) {
        std::string s;
        for (int k = 0, len = 1 + static_cast<int>(rnd(30)); k < len; k++)
            s += tokens[rnd(sizeof tokens / sizeof tokens[0])];
        std::vector<std::string> parts;
        for (size_t i = 0; i < s.size();) {
            size_t len = 1 + rnd(4);
            parts.push_back(s.substr(i, len));
            i += len;
        }
        CAPTURE(s);
        CHECK(run(parts) == run1(s));
    }
}

TEST_CASE("term filter: a C1 control is found at any offset, after any UTF-8 text", "[pty]") {
    for (const char* prefix : {"a", "\xc3\xa9", "\xe2\x80\x94", "\xf0\x9f\x98\x80", "\xc2\xb0", "\xd0\x9d"}) {
        for (int k = 0; k < 24; k++) {
            std::string text;
            for (int m = 0; m < k; m++) text += prefix;
            CAPTURE(prefix, k);
            CHECK(run1(text + "\xc2\x9d"
                              "52;c;QQ==\x07"
                              "b") == text + "b");
            CHECK(run1(text + "\x9d"
                              "52;c;QQ==\x07"
                              "b") == text + "b");
            CHECK(run1(text + "\x1b]52;c;QQ==\x07"
                              "b") == text + "b");
            CHECK(run({text + "\xc2",
                       "\x9d"
                       "52;c;QQ==\x07"
                       "b"}) == text + "b");
            std::string keep = text + "\xd0\x9d\xc3\x9d\xc2\xa0 \x1b[1m" + text;  // Н Ý nbsp: text, not C1
            CHECK(run1(keep) == keep);
        }
    }
}

TEST_CASE("term filter: a C0 control between ESC and ] does not hide an OSC", "[pty]") {
    // The terminal runs it and stays after the ESC: ESC BEL ] 52 is still an OSC 52.
    CHECK(run1("a\x1b\x07]52;c;ZWNobw==\x07"
               "b") ==
          "a\x07"
          "b");
    CHECK(run1("a\x1b\r\n]52;c;ZWNobw==\x07"
               "b") ==
          "a\r\n"
          "b");
    CHECK(bytewise("a\x1b\x07]52;c;ZWNobw==\x07"
                   "b") ==
          "a\x07"
          "b");
    CHECK(run1("a\x1b\x7f]52;c;ZWNobw==\x07"
               "b") ==
          "a\x7f"
          "b");
    // CAN cancels the ESC: what follows is text.
    CHECK(run1("a\x1b\x18]52;c;ZWNobw==\x07") == "a\x1b\x18]52;c;ZWNobw==\x07");
}

TEST_CASE("term filter: xterm window operations are dropped but the size reports and title stack", "[pty]") {
    // Iconify, move, resize, raise, lower, refresh, maximize, full screen, DECSLPP.
    for (const char* op :
         {"1", "2", "3;10;10", "4;2000;3000", "5", "6", "7", "8;100;300", "9;1", "10;1", "24", "72", "", ";5", "0"}) {
        CAPTURE(op);
        std::string seq = std::string("\x1b[") + op + "t";
        CHECK(run1("a" + seq + "b") == "ab");
        CHECK(bytewise("a" + seq + "b") == "ab");
        CHECK(run1("a\x9b" + std::string(op) + "tb") == "ab");      // 8-bit C1 CSI
        CHECK(run1("a\xc2\x9b" + std::string(op) + "tb") == "ab");  // UTF-8 encoded
    }
    // Reports of the window's state, position, icon label and title.
    for (const char* op : {"11", "13", "13;2", "20", "21"}) CHECK(run1(std::string("a\x1b[") + op + "tb") == "ab");
    // Kept: the size reports (the command has the size anyway) and the title stack.
    for (const char* op : {"14", "14;2", "15", "16", "18", "19", "22;0", "22;2", "23;0"}) {
        std::string s = std::string("a\x1b[") + op + "tb";
        CHECK(run1(s) == s);
        CHECK(bytewise(s) == s);
    }
    // Other sequences ending in t: title modes, DECSWBV (an intermediate), DECRARA.
    for (const char* s : {"\x1b[>2t", "\x1b[3 t", "\x1b[1;1;2;2;1$t"}) CHECK(run1(s) == s);
    // A private marker after the number does not hide it.
    CHECK(run1("a\x1b[2?tb") == "ab");
}

TEST_CASE("term filter: the kitty keyboard protocol's flag stack is dropped", "[pty]") {
    for (const char* s :
         {"\x1b[>1u", "\x1b[>31u", "\x1b[<u", "\x1b[<5u", "\x1b[=31;1u", "\x1b[=0;3u", "\x1b[?u", "\x1b[1>u"}) {
        CAPTURE(s);
        CHECK(run1(std::string("a") + s + "b") == "ab");
        CHECK(bytewise(std::string("a") + s + "b") == "ab");
    }
    CHECK(run1("a\x9b>1ub") == "ab");
    // Plain CSI u restores the cursor (SCORC); DECSMBV has an intermediate.
    for (const char* s : {"a\x1b[ub", "a\x1b[2 ub"}) CHECK(run1(s) == s);
}

TEST_CASE("term filter: a CSI is held at most kMaxHeld bytes, and ends as a terminal ends it", "[pty]") {
    // Longer than kMaxHeld: swallowed up to its final byte, even a harmless one.
    std::string many(TermFilter::kMaxHeld, ';');
    CHECK(run1("a\x1b[2" + many + "tb") == "ab");
    CHECK(run1("a\x1b[" + many + "mb") == "ab");
    CHECK(bytewise("a\x1b[2" + many + "tb") == "ab");
    std::string fits(TermFilter::kMaxHeld - 3, ';');  // ESC [ 1 and these: kMaxHeld bytes
    CHECK(run1("a\x1b[1" + fits + "mb") == "a\x1b[1" + fits + "mb");
    CHECK(bytewise("a\x1b[1" + fits + "mb") == "a\x1b[1" + fits + "mb");
    // A C0 inside runs at once; the CSI goes on.
    CHECK(run1("a\x1b[2\rtb") == "a\rb");
    CHECK(run1("a\x1b[3\n1mb") == "a\n\x1b[31mb");
    // ESC, CAN, SUB or a non-ASCII byte end it unfinished: nothing of it is shown.
    CHECK(run1("a\x1b[2\x1b[1mtb") == "a\x1b[1mtb");
    CHECK(run1("a\x1b[2\x18tb") == "a\x18tb");
    CHECK(run1("a\x1b[2\xc3\xa9tb") == "a\xc3\xa9tb");
    CHECK(run1("a\x1b[2\x7ftb") == "ab");  // DEL is ignored inside
    // Split anywhere, colours still pass whole.
    CHECK(run({"a\x1b", "[3", "1", "mb\x1b[", "2", "t"}) == "a\x1b[31mb");
}

TEST_CASE("term filter: the reads of the screen are dropped (DECRQCRA, XTREPORTSGR)", "[pty]") {
    // A checksum of a one-cell rectangle spells out what the host's screen shows.
    for (const char* s : {"\x1b[1;1;1;1;1;1*y", "\x1b[7;1;3;5;3;5*y", "\x1b[1;1;2;2#|"}) {
        CAPTURE(s);
        CHECK(run1(std::string("a") + s + "b") == "ab");
        CHECK(bytewise(std::string("a") + s + "b") == "ab");
    }
    CHECK(run1("a\x9b"
               "1;1;1;1;1;1*yb") == "ab");
    // DECSACE (* x) and DECERA ($ z) are no reads.
    for (const char* s : {"a\x1b[2*xb", "a\x1b[1;1;2;2$zb"}) CHECK(run1(s) == s);
}

TEST_CASE("term filter: with no one to read the answers, every request is dropped", "[pty]") {
    auto quiet = [](const std::vector<std::string>& parts) {
        TermFilter f(false);
        std::string out;
        for (const auto& p : parts) f.feed(p.data(), p.size(), &out);
        return out;
    };
    const char* requests[] = {
        "\x1b[c",
        "\x1b[0c",
        "\x1b[>c",
        "\x1b[=c",
        "\x1b[6n",
        "\x1b[5n",
        "\x1b[?6n",
        "\x1b[?996n",
        "\x1b[x",
        "\x1b[4$p",
        "\x1b[?25$p",
        "\x1b[>q",
        "\x1b[>0q",
        "\x1b[?1;1;0S",
        "\x1b[?4m",
        "\x1b[1$u",
        "\x1b[&u",
        "\x1b[1$w",
        "\x1b[14t",
        "\x1b[18t",
        "\x1b[19t",
        "\x1b[16t",
        "\x05",
        "\x1b[#R",
        "\x1b[1'|",
        "\x1bZ",
        "\x9a",
        "\xc2\x9a",
        "\x1b]10;?\x07",
        "\x1b]4;1;?\x1b\\",
        "\x1bP$qm\x1b\\",
        "\x1bP+q544e\x1b\\",
        "\x9b"
        "6n",
    };
    for (const char* r : requests) {
        CAPTURE(r);
        std::string s = std::string("a") + r + "b";
        CHECK(quiet({s}) == "ab");
        std::vector<std::string> bytes;
        for (char c : s) bytes.emplace_back(1, c);
        CHECK(quiet(bytes) == "ab");
        CHECK(run1(s) == s);  // a command that reads its pty gets the answer
    }
    // What is no request passes as before: colours, cursor moves, title stack, sixel, SCORC, DECSCUSR, text.
    std::string kept =
        "x\x1b[1;31m\x1b[m\x1b[2J\x1b[H\x1b[22;0t\x1b[23;0t\x1b[u\x1b[2 q\x1b[>1;2m\x1b[s\x1b"
        "7\x1bP0;1q#0~\x1b\\\xc3\xa9y";
    CHECK(quiet({kept}) == kept);
    // ENQ (the answerback: PuTTY types "PuTTY") is dropped wherever a terminal runs it, in a long run of text too.
    CHECK(quiet({"a\x1b[3\x05"
                 "1mb"}) == "a\x1b[31mb");
    CHECK(quiet({"a\x1b\x05"
                 "7b"}) ==
          "a\x1b"
          "7b");
    std::string text(40, 'x');
    CHECK(quiet({text + "\x05" + text}) == text + text);
    CHECK(run1(text + "\x05" + text) == text + "\x05" + text);
}
