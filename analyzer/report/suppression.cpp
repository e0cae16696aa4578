#include "analyzer/report/suppression.h"

#include <fnmatch.h>

#include <algorithm>
#include <optional>
#include <regex>

#include "analyzer/rule/rule_info.h"

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

// clang-tidy's check modules: NOLINT comments are shared with clang-tidy (same syntax), so a name
// in one of these is clang-tidy's, not a misspelled gpuopt-lint rule.
bool clangTidyCheck(std::string_view id) {
  static const char* const modules[] = {"abseil-", "altera-", "android-", "boost-", "bugprone-", "cert-", "clang-analyzer-",
                                        "clang-diagnostic-", "concurrency-", "cppcoreguidelines-", "darwin-", "fuchsia-",
                                        "google-", "hicpp-", "linuxkernel-", "llvm-", "llvmlibc-", "misc-", "modernize-", "mpi-",
                                        "objc-", "openmp-", "performance-", "portability-", "readability-", "zircon-"};
  for (const char* m : modules)
    if (id.rfind(m, 0) == 0) return true;
  return false;
}

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Names gpuopt-lint itself reports besides its rules.
bool ownPseudoRule(std::string_view id) {
  return id == "nolint-unpaired" || id == "nolint-unknown-rule" || id.rfind("measured-", 0) == 0;
}

}  // namespace

// cpplint's categories (`// NOLINT(runtime/arrays)`, `// NOLINT(build/include_what_you_use)`) and
// a project's own names in that form (caffe's `caffe/alt_fn`): CATEGORY/NAME, never a gpuopt-lint
// rule id, which is one kebab-case word.
bool cpplintCategory(std::string_view id) { return id.find('/') != std::string_view::npos; }

std::optional<std::string> unknownNolintRule(std::string_view glob) {
  if (ownPseudoRule(glob) || clangTidyCheck(glob) || cpplintCategory(glob)) return std::nullopt;
  for (const auto& r : allRuleInfos())
    if (globMatch(glob, r.id)) return std::nullopt;
  std::string best;
  size_t bestD = 4;  // suggest within 3 edits
  for (const auto& r : allRuleInfos())
    if (size_t d = editDistance(glob, r.id); d < bestD) bestD = d, best = std::string(r.id);
  std::string msg = "NOLINT names '" + std::string(glob) + "', which is not a gpuopt-lint rule";
  msg += best.empty() ? " (see gpuopt-lint --list-rules)" : " (did you mean '" + best + "'?)";
  return msg + ": it suppresses nothing";
}

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
      for (const auto& g : m.globs)
        if (auto msg = unknownNolintRule(g)) {
          problem(ln, m.col, *msg);
          problems_.back().ruleId = "nolint-unknown-rule";
        }
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
