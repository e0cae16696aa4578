#include "analyzer/fix.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include "analyzer/source_cache.h"

namespace gpuopt {

namespace {
// Byte offset of (line, col), 1-based.
size_t offsetOf(const std::string& text, unsigned line, unsigned col) {
  size_t off = 0;
  for (unsigned l = 1; l < line && off < text.size(); ++l) {
    size_t nl = text.find('\n', off);
    if (nl == std::string::npos) return text.size();
    off = nl + 1;
  }
  return std::min(text.size(), off + (col ? col - 1 : 0));
}
}  // namespace

std::string applyFixesToText(const std::string& text, const std::vector<Diagnostic>& diags, unsigned* applied) {
  std::map<size_t, std::pair<size_t, std::string>> edits;  // begin -> (end exclusive, replacement)
  for (const auto& d : diags)
    for (const auto& f : d.fixIts) {
      size_t b = offsetOf(text, f.span.begin.line, f.span.begin.col);
      size_t e = offsetOf(text, f.span.endLine, f.span.endCol) + 1;
      if (e < b || e > text.size()) continue;
      edits.emplace(b, std::make_pair(e, f.replacement));  // duplicates (same place) applied once
    }
  std::string out;
  size_t pos = 0;
  unsigned n = 0;
  for (const auto& [b, er] : edits) {
    if (b < pos) continue;  // overlaps an earlier edit
    out.append(text, pos, b - pos);
    out += er.second;
    pos = er.first;
    ++n;
  }
  out.append(text, pos, std::string::npos);
  if (applied) *applied = n;
  return out;
}

bool applyFixes(const std::string& file, const std::vector<Diagnostic>& diags, bool dryRun, std::ostream& out,
                std::string& error) {
  std::ifstream in(file, std::ios::binary);
  if (!in) { error = "cannot read file for --fix"; return false; }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  unsigned applied = 0;
  std::string fixed = applyFixesToText(text, diags, &applied);
  if (!applied) return true;
  if (dryRun) {
    auto a = splitLines(text), b = splitLines(fixed);
    out << "--- " << file << "\n+++ " << file << " (fixed)\n";
    size_t n = std::max(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
      std::string x = i < a.size() ? a[i] : "", y = i < b.size() ? b[i] : "";
      if (x == y) continue;
      out << "@@ -" << i + 1 << " +" << i + 1 << " @@\n";
      if (i < a.size()) out << "-" << x << "\n";
      if (i < b.size()) out << "+" << y << "\n";
    }
    return true;
  }
  // Atomic write: temp file in the same folder, then rename over the original.
  std::string tmp = file + ".gpuopt-lint.tmp." + std::to_string(::getpid());
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    if (!o) { error = "cannot write temporary file for --fix"; return false; }
    o << fixed;
    o.flush();
    if (!o) { std::remove(tmp.c_str()); error = "cannot write temporary file for --fix"; return false; }
  }
  std::error_code ec;
  std::filesystem::permissions(tmp, std::filesystem::status(file, ec).permissions(), ec);
  if (std::rename(tmp.c_str(), file.c_str()) != 0) {
    std::remove(tmp.c_str());
    error = "cannot replace file for --fix";
    return false;
  }
  return true;
}

}  // namespace gpuopt
