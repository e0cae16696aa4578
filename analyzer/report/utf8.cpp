#include "analyzer/report/utf8.h"

namespace gpuopt {

namespace {
// The length of the well-formed UTF-8 sequence at s[i], or 0 when the bytes there are not one.
// `bad` gets the length of the maximal ill-formed subpart to replace (at least 1) when 0 is returned.
size_t sequenceAt(std::string_view s, size_t i, size_t& bad) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  bad = 1;
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte (Table 3-7 of the Unicode Standard)
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) { n = 3; lo = 0xA0; }
  else if (c >= 0xE1 && c <= 0xEC) n = 3;
  else if (c == 0xED) { n = 3; hi = 0x9F; }
  else if (c >= 0xEE && c <= 0xEF) n = 3;
  else if (c == 0xF0) { n = 4; lo = 0x90; }
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) { n = 4; hi = 0x8F; }
  else return 0;  // a continuation byte, C0, C1 or F5-FF
  for (size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) { bad = k; return 0; }
    unsigned char x = b(i + k);
    unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (x < l || x > h) { bad = k; return 0; }
  }
  return n;
}
}  // namespace

bool isValidUtf8(std::string_view s) {
  for (size_t i = 0, bad; i < s.size();) {
    size_t n = sequenceAt(s, i, bad);
    if (!n) return false;
    i += n;
  }
  return true;
}

std::string toValidUtf8(std::string_view s) {
  if (isValidUtf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0, bad; i < s.size();) {
    size_t n = sequenceAt(s, i, bad);
    if (n) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      i += bad;
    }
  }
  return out;
}

}  // namespace gpuopt
