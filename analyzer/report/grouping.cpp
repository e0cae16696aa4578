#include "analyzer/report/grouping.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
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
    d.message += more;
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

std::string compactList(const std::vector<std::string>& names, size_t shown) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < shown; ++i) out += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > shown) out += fmt::format(" and {} more", names.size() - shown);
  return out;
}

std::string instantiationSuffix(const std::vector<std::string>& names) {
  if (names.empty()) return {};
  return fmt::format("; in instantiation{} {}", names.size() == 1 ? "" : "s", compactList(names));
}

namespace {
std::string canonicalFile(const std::string& f, std::map<std::string, std::string>& memo) {
  auto [it, fresh] = memo.try_emplace(f);
  if (fresh) {
    std::error_code ec;
    it->second = std::filesystem::weakly_canonical(std::filesystem::absolute(f, ec), ec).string();
    if (it->second.empty()) it->second = f;
  }
  return it->second;
}

// Replaces the instantiation suffix of a message (the last occurrence of the old one's text).
void retellInstantiations(Diagnostic& d, const std::vector<std::string>& now) {
  std::string old = instantiationSuffix(d.instantiations), fresh = instantiationSuffix(now);
  d.instantiations = now;
  if (old == fresh) return;
  size_t at = old.empty() ? std::string::npos : d.message.rfind(old);
  if (at != std::string::npos) d.message.replace(at, old.size(), fresh);
  else d.message += fresh;
}
}  // namespace

void mergeAcrossInputs(std::vector<FileResult>& results) {
  struct Kept {
    size_t file, index;
  };
  std::map<std::string, std::string> memo;
  std::map<std::tuple<std::string, std::string, unsigned, unsigned, std::string>, Kept> first;
  std::vector<std::vector<bool>> drop(results.size());
  // A header that is not installed is one finding for the run, whichever files include it and
  // wherever (qsim's custatevecEx.h, included by six of its headers and by the tests: held-out,
  // seventh stop check); the other #include lines are its related places.
  std::map<std::string, std::vector<std::string>> alsoIncludedAt;  // kept finding's fingerprint key -> sites
  auto missingHeader = [](const Diagnostic& d) -> std::string {
    if (d.ruleId != "compile-error" || d.message.size() < 3 || d.message[0] != '\'') return {};
    const size_t close = d.message.find('\'', 1);
    if (close == std::string::npos || d.message.compare(close, 17, "' file not found ") != 0) return {};
    return d.message.substr(1, close - 1);
  };
  for (size_t f = 0; f < results.size(); ++f) {
    auto& diags = results[f].diags;
    drop[f].assign(diags.size(), false);
    for (size_t i = 0; i < diags.size(); ++i) {
      Diagnostic& d = diags[i];
      std::string extra = d.ruleId == "compile-error" ? d.message : std::string();
      const std::string header = missingHeader(d);
      auto key = header.empty()
                     ? std::make_tuple(d.ruleId, canonicalFile(d.span.begin.file, memo), d.span.begin.line, d.span.begin.col, extra)
                     : std::make_tuple(d.ruleId, std::string("<missing header>"), 0u, 0u, header);
      auto [it, fresh] = first.try_emplace(key, Kept{f, i});
      std::string unit = results[f].file.empty() ? d.span.begin.file : results[f].file;
      if (fresh) {
        if (d.units.empty()) d.units.push_back(unit);
        continue;
      }
      drop[f][i] = true;
      Diagnostic& k = results[it->second.file].diags[it->second.index];
      // The more severe one speaks for the place: its words with its severity (a race said as an
      // error where a unit launches the kernel with a known shape, not the other unit's "possible
      // ... assuming a 256-thread block" raised to an error: CudaSift's OrientAndExtractCONST,
      // ninth stop check). What the other gives (units, places, instantiations) is merged below.
      Diagnostic replaced;
      const Diagnostic* other = &d;
      if (d.severity > k.severity) {
        replaced = std::move(k);
        k = d;
        k.units = replaced.units;
        auto same = [](const SourceSpan& a, const SourceSpan& b) {
          return a.begin.file == b.begin.file && a.begin.line == b.begin.line && a.begin.col == b.begin.col;
        };
        for (const auto& r : replaced.related)
          if (std::none_of(k.related.begin(), k.related.end(), [&](const SourceSpan& x) { return same(x, r); }))
            k.related.push_back(r);
        other = &replaced;
      }
      if (!header.empty() && (canonicalFile(d.span.begin.file, memo) != canonicalFile(k.span.begin.file, memo) ||
                              d.span.begin.line != k.span.begin.line)) {
        const std::string site = d.span.begin.file + ":" + std::to_string(d.span.begin.line);
        auto& sites = alsoIncludedAt[header];
        if (std::find(sites.begin(), sites.end(), site) == sites.end()) {
          sites.push_back(site);
          k.related.push_back(d.span);
        }
      }
      for (const auto& u : d.units.empty() ? std::vector<std::string>{unit} : d.units)
        if (std::find(k.units.begin(), k.units.end(), u) == k.units.end()) k.units.push_back(u);
      // Instantiations: the union, the earlier finding's first; a finding of every instantiation
      // (none listed) wins.
      {
        const std::vector<std::string> a = other == &d ? k.instantiations : replaced.instantiations;
        const std::vector<std::string> b = other == &d ? d.instantiations : k.instantiations;
        std::vector<std::string> all;
        if (!a.empty() && !b.empty()) {
          all = a;
          for (const auto& n : b)
            if (std::find(all.begin(), all.end(), n) == all.end()) all.push_back(n);
        }
        retellInstantiations(k, all);
      }
      if (d.severity > k.severity) k.severity = d.severity;
    }
  }
  for (size_t f = 0; f < results.size(); ++f) {
    auto& diags = results[f].diags;
    size_t w = 0;
    for (size_t i = 0; i < diags.size(); ++i) {
      if (drop[f][i]) continue;
      if (w != i) diags[w] = std::move(diags[i]);
      ++w;
    }
    diags.resize(w);
    for (auto& d : diags) {
      if (size_t p = d.message.rfind("; reached from "); p != std::string::npos) d.message.erase(p);  // merged again (--fix)
      if (const std::string header = missingHeader(d); !header.empty()) {
        auto sites = alsoIncludedAt.find(header);
        if (sites != alsoIncludedAt.end() && !sites->second.empty() && d.message.find("; also included at ") == std::string::npos)
          d.message += fmt::format("; also included at {} other place{} ({})", sites->second.size(),
                                   sites->second.size() == 1 ? "" : "s", compactList(sites->second));
      }
      if (d.units.size() > 1)
        d.message += fmt::format("; reached from {} translation units ({})", d.units.size(), compactList(d.units));
      else d.units.clear();  // one input: nothing to list
    }
  }
}

void foldSameLine(std::vector<Diagnostic>& diags) {
  std::map<std::tuple<std::string, unsigned, std::string, std::string>, std::vector<size_t>> at;
  for (size_t i = 0; i < diags.size(); ++i) {
    const Diagnostic& d = diags[i];
    if (d.ruleId == "compile-error") continue;
    at[{d.span.begin.file, d.span.begin.line, d.ruleId, d.function}].push_back(i);
  }
  std::vector<bool> drop(diags.size(), false);
  for (auto& [key, idx] : at) {
    if (idx.size() < 2) continue;
    // The lead is the one that matters most (its message, fix and severity agree: a 4-way
    // conflict is not announced by a 2-way one's text), then the first by column.
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      const Diagnostic& x = diags[a];
      const Diagnostic& y = diags[b];
      if (x.severity != y.severity) return x.severity > y.severity;
      if (x.impact != y.impact) return x.impact > y.impact;
      return x.span.begin.col < y.span.begin.col;
    });
    Diagnostic& k = diags[idx[0]];
    for (size_t j = 1; j < idx.size(); ++j) {
      Diagnostic& o = diags[idx[j]];
      drop[idx[j]] = true;
      k.notes.push_back({o.span, "also here: " + o.message});
      for (auto& n : o.notes) k.notes.push_back(std::move(n));  // its own notes (a race's other thread) follow
      k.related.push_back(o.span);
      for (auto& f : o.fixIts) {
        bool same = false;
        for (const auto& e : k.fixIts)
          same = same || (e.span.begin.file == f.span.begin.file && e.span.begin.line == f.span.begin.line &&
                          e.span.begin.col == f.span.begin.col && e.span.endLine == f.span.endLine &&
                          e.span.endCol == f.span.endCol && e.replacement == f.replacement);
        if (!same) k.fixIts.push_back(f);
      }
      if (o.severity > k.severity) k.severity = o.severity;
      if (o.impact > k.impact) {
        k.impact = o.impact;
        k.impactText = o.impactText;
      }
    }
    k.message += fmt::format("; and {} more on this line", idx.size() - 1);
  }
  size_t w = 0;
  for (size_t i = 0; i < diags.size(); ++i) {
    if (drop[i]) continue;
    if (w != i) diags[w] = std::move(diags[i]);
    ++w;
  }
  diags.resize(w);
}

void capMessage(Diagnostic& d) {
  // A compile error's text is the compiler's, with the folders searched for a missing header:
  // bounded by the command line, and all of it needed to fix the include path.
  if (d.ruleId == "compile-error") return;
  if (d.message.size() <= kMaxMessageBytes) return;
  d.fullMessage = d.message;
  size_t cut = d.message.rfind(' ', kMaxMessageBytes - 60);
  if (cut == std::string::npos || cut < kMaxMessageBytes / 2) cut = kMaxMessageBytes - 60;
  while (cut > 0 && (static_cast<unsigned char>(d.message[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  d.message = fmt::format("{} ... ({} bytes: the full text in JSON and SARIF)", d.message.substr(0, cut), d.fullMessage.size());
}

void dropBelowImpact(std::vector<FileResult>& results, double min) {
  for (auto& r : results) std::erase_if(r.diags, [&](const Diagnostic& d) { return d.impact >= 0 && d.impact < min; });
}

void sortByImpact(std::vector<FileResult>& results, bool flat) {
  auto key = [](const Diagnostic& d) { return d.impact < 0 ? 1.0 : d.impact; };
  auto byImpact = [&](const Diagnostic& a, const Diagnostic& b) { return key(a) > key(b); };
  for (auto& r : results) std::stable_sort(r.diags.begin(), r.diags.end(), byImpact);
  if (!flat) {
    std::stable_sort(results.begin(), results.end(), [&](const FileResult& a, const FileResult& b) {
      double ka = a.diags.empty() ? -1 : key(a.diags.front()), kb = b.diags.empty() ? -1 : key(b.diags.front());
      return ka > kb;
    });
    return;
  }
  std::vector<FileResult> out;
  std::vector<std::pair<size_t, Diagnostic>> all;  // (input, finding)
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].errors.empty()) {
      FileResult e = results[i];
      e.diags.clear();
      out.push_back(std::move(e));
    }
    for (auto& d : results[i].diags) all.emplace_back(i, std::move(d));
  }
  std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) { return byImpact(a.second, b.second); });
  for (auto& [i, d] : all) {
    FileResult one;
    one.file = results[i].file;
    one.kernels = results[i].kernels;
    one.includer = results[i].includer;
    one.diags.push_back(std::move(d));
    out.push_back(std::move(one));
  }
  results = std::move(out);
}

}  // namespace gpuopt
