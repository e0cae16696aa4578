#include "analyzer/report/suppression.h"

#include <fnmatch.h>

#include <algorithm>
#include <optional>
#include <regex>

namespace gpuopt {

bool globMatch(std::string_view p, std::string_view t) {
  // POSIX fnmatch(3): '*', '?' and [...] as in a shell, '*' also across '/' (exclude patterns match
  // whole relative paths). LLVM's GlobPattern would do as well, but this library is built without
  // LLVM on the GPU machine (demos, --list-rules, --explain).
  return fnmatch(std::string(p).c_str(), std::string(t).c_str(), 0) == 0;
}

namespace {

std::vector<std::string> parseList(const std::string& inner) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= inner.size()) {
    size_t comma = inner.find(',', start);
    std::string item = inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

struct Marker {
  std::string kind;  // NOLINT, NOLINTNEXTLINE, NOLINTBEGIN, NOLINTEND
  std::vector<std::string> globs;
  std::string rawList;  // text inside the parentheses (for BEGIN/END pairing)
  unsigned col;
};

std::vector<Marker> markersIn(const std::string& line) {
  std::vector<Marker> out;
  // Only inside comments: find "//" or "/*" first.
  size_t c1 = line.find("//"), c2 = line.find("/*");
  size_t cstart = std::min(c1, c2);
  if (cstart == std::string::npos) return out;
  static const std::regex re(R"(NOLINT(NEXTLINE|BEGIN|END)?(\(([^)]*)\))?)");
  std::string rest = line.substr(cstart);
  for (auto it = std::sregex_iterator(rest.begin(), rest.end(), re); it != std::sregex_iterator(); ++it) {
    Marker m;
    m.kind = "NOLINT" + (*it)[1].str();
    m.rawList = (*it)[3].str();
    if ((*it)[2].matched) m.globs = parseList(m.rawList);
    m.col = static_cast<unsigned>(cstart + it->position(0) + 1);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

Suppressions::Suppressions(std::string file, const std::vector<std::string>& lines) {
  struct Open {
    unsigned line, col;
    Marker m;
  };
  std::vector<Open> open;
  auto problem = [&](unsigned line, unsigned col, std::string msg) {
    Diagnostic d;
    d.ruleId = "nolint-unpaired";
    d.severity = Severity::Warning;
    d.span.begin = {file, line, col};
    d.span.endLine = line;
    d.span.endCol = col;
    d.message = std::move(msg);
    problems_.push_back(std::move(d));
  };
  for (unsigned i = 0; i < lines.size(); ++i) {
    unsigned ln = i + 1;
    for (auto& m : markersIn(lines[i])) {
      if (m.kind == "NOLINT") {
        entries_.push_back({ln, ln, m.globs});
      } else if (m.kind == "NOLINTNEXTLINE") {
        entries_.push_back({ln + 1, ln + 1, m.globs});
      } else if (m.kind == "NOLINTBEGIN") {
        open.push_back({ln, m.col, m});
      } else {  // NOLINTEND closes the latest BEGIN with the same list
        auto it = std::find_if(open.rbegin(), open.rend(),
                               [&](const Open& o) { return o.m.rawList == m.rawList; });
        if (it == open.rend()) {
          problem(ln, m.col, "unmatched 'NOLINTEND' without a preceding 'NOLINTBEGIN'" +
                                 (m.rawList.empty() ? std::string() : "(" + m.rawList + ")"));
          continue;
        }
        entries_.push_back({it->line, ln, it->m.globs});
        open.erase(std::next(it).base());
      }
    }
  }
  for (auto& o : open)
    problem(o.line, o.col, "unmatched 'NOLINTBEGIN' without a subsequent 'NOLINTEND'" +
                               (o.m.rawList.empty() ? std::string() : "(" + o.m.rawList + ")"));
}

bool Suppressions::suppresses(const Diagnostic& d) const {
  unsigned ln = d.span.begin.line;
  for (const auto& e : entries_) {
    if (ln < e.firstLine || ln > e.lastLine) continue;
    if (e.globs.empty()) return true;
    for (const auto& g : e.globs)
      if (globMatch(g, d.ruleId)) return true;
  }
  return false;
}

void applySuppressions(const std::string& file, const std::vector<std::string>& lines,
                       std::vector<Diagnostic>& diags) {
  Suppressions s(file, lines);
  std::erase_if(diags, [&](const Diagnostic& d) { return d.span.begin.file == file && s.suppresses(d); });
  for (const auto& p : s.problems()) diags.push_back(p);
}

}  // namespace gpuopt
