#include "analyzer/report/grouping.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace gpuopt {

std::string findingPattern(const Diagnostic& d) {
  std::string out;
  const std::string& m = d.message;
  // Drop '...' quoted source text and " (at ...)" loop contexts; keep everything else.
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] == '\'') {
      size_t close = m.find('\'', i + 1);
      if (close != std::string::npos) {
        out += "'…'";
        i = close;
        continue;
      }
    }
    if (m.compare(i, 5, " (at ") == 0) {
      size_t close = m.find(')', i);
      if (close != std::string::npos) {
        i = close;
        continue;
      }
    }
    out += m[i];
  }
  return d.ruleId + "|" + d.function + "|" + out;
}

void groupRepeats(std::vector<Diagnostic>& diags) {
  std::map<std::string, size_t> first;  // pattern -> index of the finding that keeps it
  std::vector<bool> folded(diags.size(), false);
  std::vector<std::vector<size_t>> members(diags.size());
  for (size_t i = 0; i < diags.size(); ++i) {
    const Diagnostic& d = diags[i];
    if (d.function.empty() || d.ruleId == "compile-error") continue;
    auto [it, fresh] = first.try_emplace(d.span.begin.file + "|" + findingPattern(d), i);
    if (fresh) continue;
    members[it->second].push_back(i);
    folded[i] = true;
  }
  for (size_t i = 0; i < diags.size(); ++i) {
    if (members[i].empty()) continue;
    Diagnostic& d = diags[i];
    std::string lines;
    size_t listed = 0;
    unsigned lastLine = 0;
    for (size_t j : members[i]) {
      d.related.push_back(diags[j].span);
      // The folded places' mechanical fixes stay with the finding (--fix, --export-fixes, quick fixes).
      for (const auto& f : diags[j].fixIts) {
        bool dup = std::any_of(d.fixIts.begin(), d.fixIts.end(), [&](const FixIt& g) {
          return g.span.begin.file == f.span.begin.file && g.span.begin.line == f.span.begin.line &&
                 g.span.begin.col == f.span.begin.col && g.replacement == f.replacement;
        });
        if (!dup) d.fixIts.push_back(f);
      }
      unsigned ln = diags[j].span.begin.line;
      if (ln == lastLine || ln == d.span.begin.line) continue;
      lastLine = ln;
      if (listed++ < 8) lines += (lines.empty() ? "" : ", ") + std::to_string(ln);
    }
    if (listed > 8) lines += ", ...";
    std::string more = fmt::format("; and {} more like it in '{}'", members[i].size(), d.function);
    if (!lines.empty()) more += " (line" + std::string(listed == 1 ? " " : "s ") + lines + ")";
    // Before the measured-impact bracket at the end of the message, if there is one.
    size_t bracket = d.message.rfind(" [");
    if (bracket != std::string::npos && d.message.back() == ']') d.message.insert(bracket, more);
    else d.message += more;
  }
  size_t w = 0;
  for (size_t i = 0; i < diags.size(); ++i) {
    if (folded[i]) continue;
    if (w != i) diags[w] = std::move(diags[i]);
    ++w;
  }
  diags.resize(w);
}

namespace {
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string spanText(const SourceSpan& s, SourceCache& sources) {
  std::string text;
  for (unsigned ln = s.begin.line; ln <= std::max(s.begin.line, s.endLine) && ln < s.begin.line + 20; ++ln) {
    std::string line = sources.line(s.begin.file, ln);
    size_t from = ln == s.begin.line && s.begin.col > 0 ? s.begin.col - 1 : 0;
    size_t to = ln == s.endLine && s.endCol > 0 ? std::min<size_t>(s.endCol, line.size()) : line.size();
    if (from < to && from < line.size()) text += line.substr(from, to - from) + " ";
  }
  std::string out;
  for (char c : text) {
    bool blank = c == ' ' || c == '\t' || c == '\r';
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out += blank ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}
}  // namespace

void assignFingerprints(std::vector<Diagnostic>& diags, SourceCache& sources) {
  std::map<std::string, unsigned> seen;
  for (auto& d : diags) {
    std::string key = d.ruleId + "|" + d.function + "|" + spanText(d.span, sources);
    if (d.ruleId == "compile-error") key += "|" + d.message;
    unsigned n = seen[d.span.begin.file + "|" + key]++;
    d.fingerprint = fmt::format("{:016x}", fnv1a(key + "|" + std::to_string(n)));
  }
}

}  // namespace gpuopt
