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

#include "analyzer/report/output.h"
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
