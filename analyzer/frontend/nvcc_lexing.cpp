#include "analyzer/frontend/nvcc_lexing.h"

#include <cctype>
#include <string_view>

namespace gpuopt {

namespace {
bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool encodingPrefix(std::string_view id, bool& raw) {
  raw = !id.empty() && id.back() == 'R';
  std::string_view p = raw ? id.substr(0, id.size() - 1) : id;
  return p.empty() || p == "u8" || p == "u" || p == "U" || p == "L";
}
}  // namespace

bool splitReservedLiteralSuffixes(std::string& text) {
  if (text.find("\"__") == std::string::npos) return false;
  bool changed = false;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {  // line comment
      i = text.find('\n', i);
      if (i == std::string::npos) break;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {  // block comment
      i = text.find("*/", i + 2);
      if (i == std::string::npos) break;
      i += 2;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
      // A pp-number: digits, letters, '.', digit separators, signs after an exponent.
      size_t j = i + 1;
      while (j < text.size()) {
        char d = text[j];
        if (identChar(d) || d == '.' || (d == '\'' && j + 1 < text.size() && identChar(text[j + 1]))) ++j;
        else if ((d == '+' || d == '-') && (text[j - 1] == 'e' || text[j - 1] == 'E' || text[j - 1] == 'p' || text[j - 1] == 'P')) ++j;
        else break;
      }
      i = j;
      continue;
    }
    size_t litStart = i;
    bool raw = false;
    if (identChar(c)) {
      size_t j = i;
      while (j < text.size() && identChar(text[j])) ++j;
      bool isPrefix = j < text.size() && (text[j] == '"' || text[j] == '\'') &&
                      encodingPrefix(std::string_view(text).substr(i, j - i), raw);
      if (!isPrefix) {
        i = j;
        continue;
      }
      i = j;  // at the quote; the literal starts at litStart
      c = text[i];
    }
    if (c == '\'') {  // character literal
      size_t j = i + 1;
      while (j < text.size() && text[j] != '\'' && text[j] != '\n') j += text[j] == '\\' ? 2 : 1;
      i = j + 1;
      continue;
    }
    if (c != '"') {
      ++i;
      continue;
    }
    size_t close;
    if (raw) {  // R"delim( ... )delim"
      size_t open = text.find('(', i + 1);
      if (open == std::string::npos) break;
      std::string end = ")" + text.substr(i + 1, open - i - 1) + "\"";
      size_t e = text.find(end, open + 1);
      if (e == std::string::npos) break;
      close = e + end.size() - 1;
    } else {
      size_t j = i + 1;
      while (j < text.size() && text[j] != '"' && text[j] != '\n') j += text[j] == '\\' ? 2 : 1;
      if (j >= text.size() || text[j] != '"') {
        i = j;
        continue;
      }
      close = j;
    }
    i = close + 1;
    if (i + 2 < text.size() && text[i] == '_' && text[i + 1] == '_' && identChar(text[i + 2])) {
      // A blank on the same line before the literal, whose removal joins no tokens: the one just
      // before it (after `extern`, `(`, ...), unless it follows an encoding prefix's letters.
      size_t b = litStart;
      bool moved = false;
      if (b > 0 && (text[b - 1] == ' ' || text[b - 1] == '\t')) {
        size_t k = b - 1;
        size_t w = k;
        while (w > 0 && identChar(text[w - 1])) --w;
        bool rawPrev = false;
        bool joins = w < k && encodingPrefix(std::string_view(text).substr(w, k - w), rawPrev);
        if (!joins) {
          text.erase(k, 1);
          text.insert(close, " ");  // `close` moved left by one: the blank lands after the quote
          moved = true;
        }
      }
      if (!moved) {
        text.insert(i, " ");
        ++i;
      }
      changed = true;
    }
  }
  return changed;
}

}  // namespace gpuopt
