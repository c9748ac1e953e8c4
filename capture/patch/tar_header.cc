#include "capture/patch/tar_header.h"

#include <cstring>

namespace capture {

namespace {

// The longest path (a dir's without its '/') written here: its pax header's
// name, DIR/PaxHeader/NAME, then fits the ustar name field whole, and
// libarchive (3.6.2, measured) shortens a NAME only from 88 bytes on.
constexpr size_t kPathMax = 87;
constexpr size_t kLinkMax = 100;
constexpr int64_t kMtimeMax = 0x7fffffff;  // libarchive writes a pax mtime from here on
constexpr uint64_t kSizeMax = uint64_t{1} << 33;

bool plain(std::string_view s) {
    for (unsigned char c : s)
        if (c == 0 || c >= 0x80) return false;
    return true;
}

// v in `digits` octal digits at p (v fits).
void octal(uint64_t v, char* p, int digits) {
    for (int i = digits - 1; i >= 0; i--, v >>= 3) p[i] = static_cast<char>('0' + (v & 7));
}

// libarchive's ustar template: numeric fields of zeros with their
// terminators, the checksum field as spaces, the magic "ustar\0" "00".
void ustar(char* h, std::string_view name, char type, uint32_t mode, uint64_t size, int64_t mtime,
           std::string_view link) {
    std::memset(h, 0, 512);
    std::memcpy(h, name.data(), name.size());
    octal(mode & 07777, h + 100, 6);
    std::memcpy(h + 106,
                " \0"
                "000000 \0"
                "000000 \0",
                18);  // mode's end, uid, gid
    octal(size, h + 124, 11);
    h[135] = ' ';
    octal(static_cast<uint64_t>(mtime), h + 136, 11);
    h[147] = ' ';
    std::memset(h + 148, ' ', 8);
    h[156] = type;
    if (!link.empty()) std::memcpy(h + 157, link.data(), link.size());  // (an empty view may hold no pointer)
    std::memcpy(h + 257,
                "ustar\0"
                "00",
                8);
    std::memcpy(h + 329,
                "000000 \0"
                "000000 \0",
                16);  // devmajor, devminor
    unsigned sum = 0;
    for (int i = 0; i < 512; i++) sum += static_cast<unsigned char>(h[i]);
    octal(sum, h + 148, 6);
    h[154] = '\0';
}

// Decimal digits of v at p; their count.
size_t decimal(uint64_t v, char* p) {
    char d[20];
    size_t n = 0;
    do d[n++] = static_cast<char>('0' + v % 10);
    while (v /= 10);
    for (size_t i = 0; i < n; i++) p[i] = d[n - 1 - i];
    return n;
}

// "LEN mtime=SEC.FRAC\n", the fraction without trailing zeros, as
// libarchive's add_pax_attr_time and add_pax_attr_binary: LEN counts the
// whole record, its own digits too. nsec > 0.
size_t mtime_record(int64_t sec, long nsec, char* out) {
    char value[32];
    size_t n = decimal(static_cast<uint64_t>(sec), value);
    value[n++] = '.';
    char frac[9];
    for (int i = 8; i >= 0; i--, nsec /= 10) frac[i] = static_cast<char>('0' + nsec % 10);
    size_t fl = 9;
    while (frac[fl - 1] == '0') fl--;
    std::memcpy(value + n, frac, fl);
    n += fl;
    size_t len = 1 + 5 + 1 + n + 1;  // ' ' "mtime" '=' value '\n'
    size_t digits = 0, next_ten = 1;
    for (size_t i = len; i > 0; i /= 10) digits++, next_ten *= 10;
    if (len + digits >= next_ten) digits++;
    size_t o = decimal(len + digits, out);
    std::memcpy(out + o, " mtime=", 7);
    o += 7;
    std::memcpy(out + o, value, n);
    o += n;
    out[o++] = '\n';
    return o;
}

}  // namespace

size_t tar_head(const TarHead& h, char* out) {
    int64_t sec = h.mtime_ns / 1000000000;
    long nsec = static_cast<long>(h.mtime_ns % 1000000000);
    if (h.mtime_ns < 0 || sec >= kMtimeMax || h.size >= kSizeMax) return 0;
    if (h.path.empty() || h.path.size() > kPathMax || !plain(h.path) || h.path.front() == '/' || h.path.back() == '/' ||
        h.path == "." || (h.path.size() >= 2 && h.path.substr(h.path.size() - 2) == "/."))
        return 0;
    bool linked = h.type == '1' || h.type == '2';
    if (linked != !h.link.empty() || h.link.size() > kLinkMax || !plain(h.link)) return 0;
    if (h.type != '0' && h.type != '1' && h.type != '2' && h.type != '5' && h.type != '6') return 0;
    if (h.type != '0' && h.size != 0) return 0;
    size_t o = 0;
    if (nsec != 0) {
        // The pax header: named DIR/PaxHeader/NAME, its mode without the
        // set-id and sticky bits, its data the one record.
        char name[kPathMax + 16];
        size_t slash = h.path.rfind('/');
        size_t cut = slash == std::string_view::npos ? 0 : slash + 1;
        std::memcpy(name, h.path.data(), cut);
        std::memcpy(name + cut, "PaxHeader/", 10);
        std::memcpy(name + cut + 10, h.path.data() + cut, h.path.size() - cut);
        char record[64];
        size_t rn = mtime_record(sec, nsec, record);
        ustar(out, std::string_view(name, h.path.size() + 10), 'x', h.mode & 0777, rn, sec, {});
        std::memset(out + 512, 0, 512);
        std::memcpy(out + 512, record, rn);
        o = 1024;
    }
    char dir_name[kPathMax + 1];
    std::string_view name = h.path;
    if (h.type == '5') {
        std::memcpy(dir_name, h.path.data(), h.path.size());
        dir_name[h.path.size()] = '/';
        name = std::string_view(dir_name, h.path.size() + 1);
    }
    ustar(out + o, name, h.type, h.mode, h.size, sec, h.link);
    return o + 512;
}

}  // namespace capture
