#include "analyzer/frontend/nvcc_lexing.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

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

bool pragmaMacrosAsOperators(std::string& text) {
  if (text.find("pragma") == std::string::npos) return false;
  bool changed = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    size_t i = pos;
    auto blanks = [&] { while (i < eol && (text[i] == ' ' || text[i] == '\t')) ++i; };
    auto word = [&](std::string_view w) {
      if (text.compare(i, w.size(), w) != 0 || (i + w.size() < eol && identChar(text[i + w.size()]))) return false;
      i += w.size();
      return true;
    };
    blanks();
    bool ok = i < eol && text[i] == '#';
    if (ok) { ++i; blanks(); ok = word("define"); }
      if (ok) {
      size_t b = i;
      blanks();
      size_t n = i;
      while (i < eol && identChar(text[i])) ++i;
      // An object-like macro: a blank after the name (`NAME(` is function-like).
      ok = b < n && n < i && i < eol && (text[i] == ' ' || text[i] == '\t');
    }
    size_t hash = 0;
    if (ok) {
      blanks();
      hash = i;
      ok = i < eol && text[i] == '#';
      if (ok) { ++i; blanks(); ok = word("pragma"); }
    }
    std::string body;
    if (ok) {
      size_t e = eol;
      for (const char* c : {"//", "/*"}) e = std::min(e, text.find(c, i) == std::string::npos ? eol : text.find(c, i));
      size_t end = e;
      while (end > i && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\r')) --end;
      ok = end > i && text[end - 1] != '\\' && text.find('"', i) >= end;  // no continuation, no strings
      if (ok) {
        size_t s0 = i;
        while (s0 < end && (text[s0] == ' ' || text[s0] == '\t')) ++s0;
        body = text.substr(s0, end - s0);
        std::string repl = "_Pragma(\"" + body + "\")";
        text.replace(hash, end - hash, repl);
        eol += repl.size() - (end - hash);
        changed = true;
      }
    }
    pos = eol + 1;
  }
  return changed;
}

namespace {
// In the template string at `at` (its opening quote): each `%` followed by a PTX special register's
// name (`%laneid`, `%clock64`, `%tid.x`: a letter or '_' and more name characters after it), which
// nvcc passes through as text and Clang rejects ("invalid % escape in inline assembly string").
// `%%`, operands (`%0`) and a modifier on an operand (`%h0`) are left alone.
void ptxNamesInTemplate(const std::string& text, size_t at, std::vector<size_t>& out) {
  for (size_t p = at + 1; p < text.size() && text[p] != '"' && text[p] != '\n'; ++p) {
    if (text[p] == '\\') { ++p; continue; }
    if (text[p] != '%' || p + 1 >= text.size()) continue;
    char n = text[p + 1];
    if (n == '%') { ++p; continue; }
    if (!std::isalpha(static_cast<unsigned char>(n)) && n != '_') continue;
    size_t q = p + 1;
    while (q < text.size() && identChar(text[q])) ++q;
    bool modifierOnOperand = q - (p + 1) >= 2 && std::isalpha(static_cast<unsigned char>(n)) &&
                             std::all_of(text.begin() + static_cast<std::ptrdiff_t>(p + 2),
                                         text.begin() + static_cast<std::ptrdiff_t>(q),
                                         [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (q - (p + 1) >= 2 && !modifierOnOperand) out.push_back(p);
  }
}
}  // namespace

bool commaSeparateAsmOperands(std::string& text) {
  if (text.find("asm") == std::string::npos) return false;
  bool changed = false;
  size_t i = 0;
  auto skipString = [&](size_t j) {  // j at '"': returns the index after the closing quote
    ++j;
    while (j < text.size() && text[j] != '"' && text[j] != '\n') j += text[j] == '\\' ? 2 : 1;
    return std::min(j + 1, text.size());
  };
  while (i < text.size()) {
    char c = text[i];
    if (c == '/' && i + 1 < text.size() && (text[i + 1] == '/' || text[i + 1] == '*')) {
      i = text[i + 1] == '/' ? text.find('\n', i) : text.find("*/", i + 2);
      if (i == std::string::npos) break;
      continue;
    }
    if (c == '"') { i = skipString(i); continue; }
    if (c == '\'') {
      size_t j = i + 1;
      while (j < text.size() && text[j] != '\'' && text[j] != '\n') j += text[j] == '\\' ? 2 : 1;
      i = j + 1;
      continue;
    }
    if (!identChar(c)) { ++i; continue; }
    size_t j = i;
    while (j < text.size() && identChar(text[j])) ++j;
    std::string_view id(text.data() + i, j - i);
    bool prevIdent = i > 0 && identChar(text[i - 1]);
    i = j;
    if (prevIdent || (id != "asm" && id != "__asm__" && id != "__asm")) continue;
    // Qualifiers, then the parenthesis.
    size_t k = j;
    for (;;) {
      while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      size_t w = k;
      while (w < text.size() && identChar(text[w])) ++w;
      std::string_view q(text.data() + k, w - k);
      if (q == "volatile" || q == "__volatile__" || q == "__volatile" || q == "goto" || q == "inline") { k = w; continue; }
      break;
    }
    if (k >= text.size() || text[k] != '(') continue;
    int depth = 1;
    bool operands = false;  // after the first ':' of the statement
    std::vector<size_t> escapes;  // '%' of the template that name a PTX register: doubled below
    size_t m = k + 1;
    while (m < text.size() && depth > 0) {
      char d = text[m];
      if (d == '"') {
        if (depth == 1 && !operands) ptxNamesInTemplate(text, m, escapes);
        m = skipString(m);
        continue;
      }
      if (d == '(') ++depth;
      else if (d == ')') {
        --depth;
        if (depth == 1 && operands) {
          size_t n = m + 1;
          while (n < text.size() && std::isspace(static_cast<unsigned char>(text[n]))) ++n;
          if (n < text.size() && text[n] == '"') {
            if (n > m + 1 && (text[m + 1] == ' ' || text[m + 1] == '\t')) text[m + 1] = ',';
            else text.insert(m + 1, ",");
            changed = true;
          }
        }
      } else if (d == ':' && depth == 1) operands = true;
      else if (d == ';' || d == '{' || d == '}') break;  // not an asm statement after all
      ++m;
    }
    // Only an asm statement with operands reads % escapes in its template (basic asm does not).
    if (operands && depth == 0 && !escapes.empty()) {
      for (auto e = escapes.rbegin(); e != escapes.rend(); ++e) text.insert(*e, "%");
      m += escapes.size();
      changed = true;
    }
    i = m;
  }
  return changed;
}

}  // namespace gpuopt
