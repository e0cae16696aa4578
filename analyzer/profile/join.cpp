// Joining a profile with the findings: each finding on a profiled line gets its own instructions'
// figures and a verdict (match.h), or says why it was not measured; measured-only findings are
// added (measured_only.cpp); findings are ranked by their line's share of the kernel's samples.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "analyzer/profile/join_detail.h"
#include "analyzer/profile/match.h"
#include "analyzer/profile/profile.h"

namespace gpuopt::profile {

namespace fs = std::filesystem;

namespace detail {
std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> out;
  for (const auto& c : fs::path(path).lexically_normal()) {
    std::string s = c.string();
    if (!s.empty() && s != "/" && s != ".") out.push_back(s);
  }
  return out;
}

size_t commonSuffix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n]) ++n;
  return n;
}

std::string canonical(const std::string& path) {
  std::error_code ec;
  return fs::weakly_canonical(fs::absolute(path, ec), ec).string();
}

std::string pct(double share) { return share < 0 ? "?" : fmt::format("{:.0f}%", 100.0 * share); }
}  // namespace detail

using namespace detail;

namespace {

struct LineRef {
  const Kernel* kernel;
  const Line* line;
};

// Why a finding's line has no measurement, and how to get one.
std::string notExecutedWhy(const Profile& p, const std::string& function) {
  std::string k = baseName(function);
  unsigned launches = 0;
  bool inProfile = false;
  for (const auto& x : p.kernels)
    if (x.name == k) inProfile = true, launches += x.launches;
  if (k.empty()) return "no instruction of this line ran in the profiled launches";
  if (inProfile)
    return launches ? fmt::format("no instruction of this line ran in the {} profiled launch{} of '{}' (this run did not "
                                  "take the path it is on, or the compiler generated no code for it there)",
                                  launches, launches == 1 ? "" : "es", k)
                    : fmt::format("no instruction of this line ran in the profiled launches of '{}'", k);
  std::string how = fmt::format("profile it with -k {}", k);
  if (!p.kernelFilter.empty()) {
    std::string re = p.kernelFilter.rfind("regex:", 0) == 0 ? p.kernelFilter.substr(6) : p.kernelFilter;
    bool matches = false;
    try {
      matches = std::regex_search(k, std::regex(re));
    } catch (const std::regex_error&) {
      matches = re == k;
    }
    if (!matches)
      return fmt::format("'{}' was not profiled: it does not match the kernel filter -k {}; {}", k, re, how);
  }
  if (p.launchLimit > 0 && p.launches >= p.launchLimit)
    return fmt::format("'{}' was not profiled: ncu stopped at its launch limit (-c {}) after {} launches of other "
                       "kernels, before '{}' ran (if it runs at all); {}, or raise the limit (-c {})",
                       k, p.launchLimit, p.launches, k, how, p.launchLimit * 5);
  if (p.launchLimit > 0)
    return fmt::format("'{}' did not run in the profiled program (all {} of its launches were profiled)", k, p.launches);
  return fmt::format("'{}' is not in this profile ({} launches of other kernels): it did not run, or ran after the "
                     "launches ncu profiled (its launch limit, -c); {}, or a larger -c",
                     k, p.launches, how);
}

}  // namespace

void joinProfile(const Profile& p, std::vector<FileResult>& results, const JoinOptions& o) {
  // Index: profile lines by (file components, line).
  struct FileLines {
    std::vector<std::string> comps;
    std::map<unsigned, std::vector<LineRef>> lines;
  };
  std::map<std::string, FileLines> byFile;
  for (const auto& k : p.kernels)
    for (const auto& l : k.lines) {
      auto& f = byFile[l.file];
      if (f.comps.empty()) f.comps = components(l.file);
      f.lines[l.line].push_back({&k, &l});
    }
  // A linted file's profile file: the longest common path suffix (at least the file name).
  std::map<std::string, const FileLines*> match;
  auto profileFile = [&](const std::string& file) -> const FileLines* {
    auto it = match.find(file);
    if (it != match.end()) return it->second;
    auto comps = components(canonical(file));
    const FileLines* best = nullptr;
    size_t bestN = 0;
    for (const auto& [_, f] : byFile) {
      size_t n = commonSuffix(comps, f.comps);
      if (n > bestN) best = &f, bestN = n;
    }
    return match[file] = best;
  };
  auto refsAt = [&](const std::string& file, unsigned line, const std::string& function) {
    std::vector<LineRef> out;
    const FileLines* f = profileFile(file);
    if (!f) return out;
    auto it = f->lines.find(line);
    if (it == f->lines.end()) return out;
    out = it->second;
    // A finding in a kernel judges that kernel's instances only (a device function inlined into
    // several kernels keeps them all).
    std::string base = baseName(function);
    if (!base.empty() && std::any_of(out.begin(), out.end(), [&](const LineRef& r) { return r.kernel->name == base; }))
      std::erase_if(out, [&](const LineRef& r) { return r.kernel->name != base; });
    return out;
  };
  auto executedOf = [](const std::vector<LineRef>& refs) {
    double e = 0;
    for (const auto& r : refs) e += r.line->executed;
    return e;
  };
  // Share of the kernel's samples: the largest over the kernels the line is in.
  auto shareOf = [](const std::vector<LineRef>& refs, const LineRef** top = nullptr) {
    double best = -1;
    for (const auto& r : refs) {
      double s = r.kernel->samples > 0 ? r.line->samples / r.kernel->samples : 0;
      if (s > best) {
        best = s;
        if (top) *top = &r;
      }
    }
    return best;
  };

  Covered covered;
  for (auto& res : results) {
    for (auto& d : res.diags) {
      const std::string& rule = d.ruleId;
      if (!profileFile(d.span.begin.file)) continue;  // the file is not in the profile at all
      if (rule == "pageable-memcpy" || rule == "compile-error") continue;  // host code, or no code
      auto refs = refsAt(d.span.begin.file, d.span.begin.line, d.function);
      Measurement m;
      if (refs.empty() || executedOf(refs) <= 0) {
        m.verdict = "not executed in this run";
        m.text = notExecutedWhy(p, d.function);
        d.measured = std::move(m);
        continue;
      }
      const LineRef* top = nullptr;
      m.stallShare = shareOf(refs, &top);
      m.kernel = top->kernel->name;
      m.values.push_back({"stallShare", m.stallShare});
      m.values.push_back({"stallSamples", top->line->samples});
      m.values.push_back({"kernelStallSamples", top->kernel->samples});
      m.values.push_back({"instructionsExecuted", executedOf(refs)});
      std::string where = fmt::format("this line: {} of {}'s stall samples", pct(m.stallShare), m.kernel);
      // The static cost beside what was measured (issue 28): the line's share of the kernel's
      // global sectors, and the finding's estimate.
      double lineSectors = 0, kernelSectors = 0;
      for (const auto& l : top->kernel->lines)
        for (const auto& in : l.instructions)
          if (in.sectors > 0) (&l == top->line ? lineSectors : kernelSectors) += in.sectors;
      kernelSectors += lineSectors;
      if (lineSectors > 0) {
        m.values.push_back({"measuredSectorShare", lineSectors / kernelSectors});
        where += fmt::format(", {} of its global sectors", pct(lineSectors / kernelSectors));
      }
      if (d.impact >= 0) {
        m.values.push_back({"predictedImpact", d.impact});
        if (!d.impactText.empty()) where += fmt::format(" (static estimate: {})", d.impactText);
      }
      auto pr = [&](const char* key, double def = -1) {
        auto it = d.predicted.find(key);
        return it == d.predicted.end() ? def : it->second;
      };
      bool shared = rule == "bank-conflict";
      if ((shared && pr("ways") > 0) || (rule == "uncoalesced-access" && pr("sectors") > 0)) {
        // The line's other findings of the same kind in the same kernel: what the other
        // instructions are predicted to measure.
        std::vector<double> others;
        for (const auto& e : res.diags)
          if (&e != &d && e.ruleId == rule && e.span.begin.line == d.span.begin.line && e.function == d.function &&
              (e.predicted.count("store") ? e.predicted.at("store") : 0) == pr("store", 0))
            others.push_back(predictedFactor(e.predicted, shared));
        std::vector<const Line*> lines;
        for (const auto& r : refs) lines.push_back(r.line);
        MemoryVerdict v = judgeMemoryFinding(lines, d.predicted, shared, o.tolerance, o.excessRatio, others);
        m.verdict = v.verdict;
        m.text = where + "; " + v.text;
        m.values.insert(m.values.end(), v.values.begin(), v.values.end());
        m.instructions = std::move(v.instructions);
        covered.instructions.insert(v.covered.begin(), v.covered.end());
      } else if (rule == "divergent-branch" && pr("lanes") > 0) {
        // The fewest active lanes of an instruction in the branch statement's lines.
        unsigned first = static_cast<unsigned>(pr("firstLine", d.span.begin.line)),
                 last = static_cast<unsigned>(pr("lastLine", d.span.begin.line));
        double lanes = 32;
        for (unsigned ln = first; ln <= last && ln < first + 200; ++ln)
          for (const auto& r : refsAt(d.span.begin.file, ln, d.function)) {
            for (const auto& in : r.line->instructions)
              if (in.executed > 0 && in.predicatedOn > 0) lanes = std::min(lanes, in.predicatedOn / in.executed);
            covered.lines.insert({r.line, "lanes"});
          }
        double predicted = pr("lanes");
        m.values.push_back({"predictedActiveLanes", predicted});
        m.values.push_back({"measuredActiveLanes", lanes});
        bool ok = within(lanes, predicted, o.tolerance) || std::fabs(lanes - predicted) <= 1.0;
        // A split the finding names for one loop iteration is compared only when the average of every
        // iteration could not explain the difference (fewer lanes on average is no disagreement).
        bool averaged = !ok && pr("perIteration", 0) > 0 && lanes < predicted;
        m.verdict = ok ? "confirmed" : averaged ? "not compared" : "differs";
        m.text = fmt::format("{}; {} of 32 lanes active on average in the branch's least occupied instruction, {} "
                             "predicted{}",
                             where, num(lanes), num(predicted),
                             averaged ? "; " + kIterationNote
                                      : ok ? "" : " (the counters average every execution of the instruction)");
      } else {
        // Races and barriers: the counters show that the line ran, not whether it raced.
        m.verdict = "executed";
        m.text = where + "; hardware counters cannot confirm or rule out this kind of finding";
      }
      d.measured = std::move(m);
    }
  }

  addMeasuredOnly(p, results, covered, o);

  // Rank: by the line's share of its kernel's stall samples, measured before not executed.
  auto key = [](const Diagnostic& d) { return d.measured ? d.measured->stallShare : -2.0; };
  for (auto& r : results)
    std::stable_sort(r.diags.begin(), r.diags.end(), [&](const Diagnostic& a, const Diagnostic& b) { return key(a) > key(b); });
  std::stable_sort(results.begin(), results.end(), [&](const FileResult& a, const FileResult& b) {
    double ka = a.diags.empty() ? -3 : key(a.diags.front()), kb = b.diags.empty() ? -3 : key(b.diags.front());
    return ka > kb;
  });
}

}  // namespace gpuopt::profile
