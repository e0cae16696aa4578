#include "analyzer/report/fix.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "analyzer/frontend/cache.h"
#include "analyzer/frontend/frontend.h"
#include "analyzer/report/output.h"
#include "analyzer/report/safe_write.h"
#include "analyzer/report/source_cache.h"

namespace gpuopt {

size_t byteOffset(const std::string& text, unsigned line, unsigned col) {
  size_t off = 0;
  for (unsigned l = 1; l < line && off < text.size(); ++l) {
    size_t nl = text.find('\n', off);
    if (nl == std::string::npos) return text.size();
    off = nl + 1;
  }
  return std::min(text.size(), off + (col ? col - 1 : 0));
}

namespace {
size_t offsetOf(const std::string& text, unsigned line, unsigned col) { return byteOffset(text, line, col); }

std::string readAll(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  if (in) ss << in.rdbuf();
  return ss.str();
}
}  // namespace

bool exportFixes(const std::string& path, const std::vector<FileResult>& results, const std::string& cwd,
                 std::string& error) {
  std::map<std::string, std::string> texts;  // absolute path -> contents (for byte offsets)
  auto absolute = [&](const std::string& f) {
    std::error_code ec;
    return std::filesystem::weakly_canonical(std::filesystem::absolute(f, ec), ec).string();
  };
  auto textOf = [&](const std::string& abs) -> const std::string& {
    auto it = texts.find(abs);
    if (it == texts.end()) it = texts.emplace(abs, readAll(abs)).first;
    return it->second;
  };
  YAML::Emitter e;
  e << YAML::BeginDoc << YAML::BeginMap;
  // One document for the whole run, as clang-tidy writes for several inputs.
  e << YAML::Key << "MainSourceFile" << YAML::Value
    << (results.size() == 1 ? absolute(results.front().file) : std::string());
  e << YAML::Key << "Diagnostics" << YAML::Value << YAML::BeginSeq;
  auto message = [&](const std::string& msg, const SourceSpan& at, const std::vector<FixIt>& fixes) {
    std::string file = absolute(at.begin.file);
    e << YAML::BeginMap;
    e << YAML::Key << "Message" << YAML::Value << msg;
    e << YAML::Key << "FilePath" << YAML::Value << file;
    e << YAML::Key << "FileOffset" << YAML::Value << byteOffset(textOf(file), at.begin.line, at.begin.col);
    e << YAML::Key << "Replacements" << YAML::Value << YAML::BeginSeq;
    for (const auto& f : fixes) {
      std::string ff = absolute(f.span.begin.file);
      const std::string& t = textOf(ff);
      size_t b = byteOffset(t, f.span.begin.line, f.span.begin.col);
      size_t end = std::min(t.size(), byteOffset(t, f.span.endLine, f.span.endCol) + 1);
      e << YAML::BeginMap << YAML::Key << "FilePath" << YAML::Value << ff << YAML::Key << "Offset" << YAML::Value << b
        << YAML::Key << "Length" << YAML::Value << (end > b ? end - b : 0) << YAML::Key << "ReplacementText"
        << YAML::Value << YAML::DoubleQuoted << f.replacement << YAML::EndMap;
    }
    e << YAML::EndSeq << YAML::EndMap;
  };
  for (const auto& r : results)
    for (const auto& d : r.diags) {
      e << YAML::BeginMap;
      e << YAML::Key << "DiagnosticName" << YAML::Value << d.ruleId;
      e << YAML::Key << "DiagnosticMessage" << YAML::Value;
      message(d.message, d.span, d.fixIts);
      if (!d.notes.empty()) {
        e << YAML::Key << "Notes" << YAML::Value << YAML::BeginSeq;
        for (const auto& n : d.notes) message(n.message, n.span, {});
        e << YAML::EndSeq;
      }
      e << YAML::Key << "Level" << YAML::Value
        << (d.severity == Severity::Error ? "Error" : d.severity == Severity::Warning ? "Warning" : "Remark");
      e << YAML::Key << "BuildDirectory" << YAML::Value << cwd;
      e << YAML::EndMap;
    }
  e << YAML::EndSeq << YAML::EndMap << YAML::EndDoc;
  if (!e.good()) { error = std::string("cannot write --export-fixes: ") + e.GetLastError(); return false; }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << e.c_str() << "\n";
  out.flush();
  if (!out) { error = "cannot write --export-fixes file '" + path + "'"; return false; }
  return true;
}

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

namespace {
// Lines of `text` split at '\n' only (a '\r' stays: a patch of a CRLF file keeps it).
std::vector<std::string> rawLines(const std::string& text, bool& eolAtEnd) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      out.push_back(text.substr(pos));
      break;
    }
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  eolAtEnd = text.empty() || text.back() == '\n';
  return out;
}
}  // namespace

std::string unifiedDiff(const std::string& before, const std::string& after, const std::string& path) {
  if (before == after) return {};
  bool eolA = true, eolB = true;
  auto a = rawLines(before, eolA), b = rawLines(after, eolB);
  constexpr size_t ctx = 3;
  // Regions that differ, as [old begin, old end) and [new begin, new end): line by line when the
  // fixes kept the number of lines (replacements within lines), else one region between the common
  // leading and trailing lines.
  struct Region { size_t a0, a1, b0, b1; };
  std::vector<Region> regions;
  if (a.size() == b.size() && eolA == eolB) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] == b[i]) continue;
      if (!regions.empty() && regions.back().a1 == i) ++regions.back().a1, ++regions.back().b1;
      else regions.push_back({i, i + 1, i, i + 1});
    }
  } else {
    size_t p = 0, q = 0;
    while (p < a.size() && p < b.size() && a[p] == b[p]) ++p;
    while (q < a.size() - p && q < b.size() - p && a[a.size() - 1 - q] == b[b.size() - 1 - q]) ++q;
    if (q > 0 && eolA != eolB) --q;  // the last line differs in its newline
    regions.push_back({p, a.size() - q, p, b.size() - q});
  }
  std::ostringstream os;
  os << "--- a/" << path << "\n+++ b/" << path << "\n";
  auto line = [&](char tag, const std::vector<std::string>& v, size_t i, bool eol) {
    os << tag << v[i] << "\n";
    if (i + 1 == v.size() && !eol) os << "\\ No newline at end of file\n";
  };
  for (size_t r = 0; r < regions.size();) {
    // Regions closer than two contexts share a hunk.
    size_t last = r;
    while (last + 1 < regions.size() && regions[last + 1].a0 - regions[last].a1 <= 2 * ctx) ++last;
    size_t start = regions[r].a0 >= ctx ? regions[r].a0 - ctx : 0;
    size_t endA = std::min(a.size(), regions[last].a1 + ctx);
    size_t shift = regions[r].b0 - regions[r].a0;  // new = old + shift before the first region
    size_t lenA = endA - start;
    size_t lenB = lenA;
    for (size_t k = r; k <= last; ++k) lenB = lenB - (regions[k].a1 - regions[k].a0) + (regions[k].b1 - regions[k].b0);
    os << "@@ -" << (lenA ? start + 1 : start) << "," << lenA << " +" << (lenB ? start + shift + 1 : start + shift) << ","
       << lenB << " @@\n";
    size_t i = start;
    for (size_t k = r; k <= last; ++k) {
      for (; i < regions[k].a0; ++i) line(' ', a, i, eolA);
      for (size_t j = regions[k].a0; j < regions[k].a1; ++j) line('-', a, j, eolA);
      for (size_t j = regions[k].b0; j < regions[k].b1; ++j) line('+', b, j, eolB);
      i = regions[k].a1;
    }
    for (; i < endA; ++i) line(' ', a, i, eolA);
    r = last + 1;
  }
  return os.str();
}

bool applyFixes(const std::string& file, const std::vector<Diagnostic>& diags, bool dryRun, std::ostream& out,
                std::string& error, const std::string& diffPath, const std::string& expectedHash, bool* skipped) {
  if (skipped) *skipped = false;
  if (!dryRun) testHookBeforeFix();
  std::ifstream in(file, std::ios::binary);
  if (!in) { error = "cannot read file for --fix"; return false; }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // The fixes' places are those of the text the analysis read: a file edited since (while the tool
  // ran) is left alone. The parse read `<< <` joined (normalizeLaunchChevrons, same length).
  if (!expectedHash.empty() && hashText(text) != expectedHash) {
    std::string joined = text;
    if (!normalizeLaunchChevrons(joined) || hashText(joined) != expectedHash) {
      if (skipped) *skipped = true;
      error = "changed since it was analysed; not fixed (run gpuopt-lint --fix again)";
      return false;
    }
  }
  unsigned applied = 0;
  std::string fixed = applyFixesToText(text, diags, &applied);
  if (!applied) return true;
  if (dryRun) {
    out << unifiedDiff(text, fixed, diffPath.empty() ? file : diffPath);
    return true;
  }
  // Through symbolic links, keeping hard links, owner and mode; all or nothing (safe_write.h).
  switch (replaceFileContents(file, text, fixed, error)) {
    case WriteOutcome::Written: return true;
    case WriteOutcome::Changed:
      if (skipped) *skipped = true;
      error = "changed while it was being fixed; not fixed (run gpuopt-lint --fix again)";
      return false;
    case WriteOutcome::Failed: return false;
  }
  return false;
}

}  // namespace gpuopt
