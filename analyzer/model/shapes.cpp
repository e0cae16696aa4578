#include "analyzer/model/shapes.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>

namespace gpuopt {

std::string ShapeGuess::name() const {
  if (y == 1 && z == 1) return fmt::format("{}-thread", x);
  if (z == 1) return fmt::format("{}x{}", x, y);
  return fmt::format("{}x{}x{}", x, y, z);
}

unsigned guessedAxes(const ShapeFacts& f) {
  unsigned n = 0;
  for (int i = 0; i < 3; ++i)
    if (!f.known[i] && (i == 0 || f.usesAxis[i])) ++n;
  return n;
}

std::vector<ShapeGuess> plausibleShapes(const ShapeFacts& f) {
  unsigned knownThreads = 1;
  for (int i = 0; i < 3; ++i) knownThreads *= f.known[i] ? f.known[i] : 1;
  // The threads left for the guessed extents: the bound's, else the usual count, within 1024.
  unsigned total = f.maxThreads ? std::min(f.maxThreads, 1024u) : std::min(f.defaultThreads, 1024u);
  unsigned room = std::max(1u, total / knownThreads);
  if (!f.maxThreads) room = std::max(1u, std::min(room, 1024u / knownThreads));
  std::vector<int> guessed;
  for (int i = 0; i < 3; ++i)
    if (!f.known[i] && (i == 0 || f.usesAxis[i])) guessed.push_back(i);
  auto base = [&] {
    ShapeGuess g;
    unsigned* d[3] = {&g.x, &g.y, &g.z};
    for (int i = 0; i < 3; ++i) *d[i] = f.known[i] ? f.known[i] : 1;
    return g;
  };
  std::vector<ShapeGuess> out;
  auto add = [&](ShapeGuess g) {
    if (g.x == 0 || g.y == 0 || g.z == 0 || g.threads() > 1024 || (f.maxThreads && g.threads() > f.maxThreads)) return;
    for (const auto& o : out)
      if (o.x == g.x && o.y == g.y && o.z == g.z) return;
    out.push_back(g);
  };
  if (guessed.empty()) {
    add(base());
    return out;
  }
  if (guessed.size() == 1) {
    // One extent: the usual count, and a quarter of it, at least a warp (64 threads for 256): how
    // many warps the block holds, and how far thread indices reach, change with it.
    unsigned small = std::max(std::min(room, 32u), room / 4);
    for (unsigned v : {room, small}) {
      ShapeGuess g = base();
      unsigned* d[3] = {&g.x, &g.y, &g.z};
      *d[guessed[0]] = v;
      add(g);
    }
    return out;
  }
  // Several extents: x is a warp's row (32) or half of one (16), the rest share what is left.
  for (unsigned x : {32u, 16u}) {
    ShapeGuess g = base();
    unsigned* d[3] = {&g.x, &g.y, &g.z};
    unsigned left = room;
    if (!f.known[0]) {
      unsigned xx = std::min(x, room);
      g.x = xx;
      left = std::max(1u, room / xx);
    }
    std::vector<int> rest;
    for (int i : guessed)
      if (i != 0) rest.push_back(i);
    if (rest.size() == 1) {
      *d[rest[0]] = left;
    } else if (rest.size() == 2) {
      unsigned zz = std::max(1u, std::min(left / 2, x == 32 ? 2u : 4u));
      *d[rest[1]] = zz;
      *d[rest[0]] = std::max(1u, left / zz);
    }
    add(g);
  }
  // Rows and layers read only in the block's linear index: the 1-D block works as well.
  bool linear = true;
  for (int i : guessed)
    if (i != 0 && !f.linearOnly[i]) linear = false;
  if (linear && !f.known[0]) {
    ShapeGuess g = base();
    g.x = std::min(room, 1024u);
    add(g);
  }
  return out;
}

namespace {
// Correctness findings: said as possible when only some shapes give them (one guessed extent).
bool raceRule(const std::string& id) {
  return id == "missing-syncthreads" || id == "global-memory-race" || id == "unsafe-warp-reduce" ||
         id == "barrier-divergence";
}

// The figures a finding states (Diagnostic::predicted), for saying how they change with the shape.
std::string figures(const Diagnostic& d) {
  auto get = [&](const char* k) -> const double* {
    auto it = d.predicted.find(k);
    return it == d.predicted.end() ? nullptr : &it->second;
  };
  if (const double* w = get("ways")) return fmt::format("{}-way", *w);
  if (const double* sct = get("sectors"))
    if (const double* u = get("usefulSectors")) return fmt::format("{} sectors for {} useful", *sct, *u);
  if (const double* l = get("lanes")) return fmt::format("{:.0f} lanes per divergent warp", *l);
  return "other counts";
}

// "8" or "2 to 8": the range of one figure over the shapes that give a finding.
std::string range(double lo, double hi, const char* spec = "{:g}") {
  std::string a = fmt::format(fmt::runtime(spec), lo), b = fmt::format(fmt::runtime(spec), hi);
  return a == b ? a : a + " to " + b;
}

// The headline figure of a finding whose count changes with the guessed shape, said as the range
// over the shapes tried ("a warp touches 16 to 32 sectors for 4 useful", "2- to 8-way bank
// conflict ... replayed 2 to 8 times"): no count the guess decides is stated as the code's.
void rangeHeadline(std::string& msg, const std::vector<const Diagnostic*>& found) {
  auto span = [&](const char* k, double& lo, double& hi) {
    bool any = false;
    for (const Diagnostic* d : found)
      if (auto it = d->predicted.find(k); it != d->predicted.end()) {
        lo = any ? std::min(lo, it->second) : it->second;
        hi = any ? std::max(hi, it->second) : it->second;
        any = true;
      }
    return any;
  };
  double lo = 0, hi = 0;
  if (span("ways", lo, hi) && lo != hi) {
    static const std::regex ways(R"(^(possible )?(\d+)-way bank conflict)"), replays(R"(replayed (\d+) times)");
    msg = std::regex_replace(msg, ways, fmt::format("$01{}-way bank conflict", lo == hi ? fmt::format("{:g}", lo) : fmt::format("{:g}- to {:g}", lo, hi)),
                             std::regex_constants::format_first_only);
    msg = std::regex_replace(msg, replays, fmt::format("replayed {} times", range(lo, hi)), std::regex_constants::format_first_only);
  }
  double slo = 0, shi = 0, ulo = 0, uhi = 0;
  if (span("sectors", slo, shi) && span("usefulSectors", ulo, uhi) && (slo != shi || ulo != uhi)) {
    double elo = 100, ehi = 0;
    for (const Diagnostic* d : found) {
      auto s = d->predicted.find("sectors"), u = d->predicted.find("usefulSectors");
      if (s == d->predicted.end() || u == d->predicted.end() || s->second <= 0) continue;
      const double e = 100.0 * u->second / s->second;
      elo = std::min(elo, e), ehi = std::max(ehi, e);
    }
    static const std::regex sectors(R"(touches (up to )?(\d+) sectors for (\d+) useful \(([\d.]+)% efficiency\))");
    msg = std::regex_replace(msg, sectors,
                             fmt::format("touches $01{} sectors for {} useful ({}% efficiency, by block shape)", range(slo, shi),
                                         range(ulo, uhi), range(elo, ehi, "{:.1f}")),
                             std::regex_constants::format_first_only);
  }
}

std::string without(std::string msg, const std::string& part) {
  if (part.empty()) return msg;
  size_t p = msg.find(part);
  if (p != std::string::npos) msg.erase(p, part.size());
  return msg;
}

// Inserts `text` before the message's trailing " [measured ...]" / " [see --demo ...]" tag.
void insertBeforeTag(std::string& msg, const std::string& text) {
  size_t bracket = msg.rfind(" [");
  if (bracket != std::string::npos && !msg.empty() && msg.back() == ']') msg.insert(bracket, text);
  else msg += text;
}

std::string list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? (i + 1 == names.size() ? " or " : ", ") : "") + names[i];
  return s;
}
}  // namespace

std::vector<Diagnostic> mergeShapeRuns(const std::vector<ShapeRun>& runs, unsigned guessed, const std::string& why,
                                       const std::string& kernel) {
  std::vector<Diagnostic> out;
  if (runs.empty()) return out;
  auto key = [](const Diagnostic& d, const ShapeRun& r) {
    (void)r;
    return fmt::format("{}|{}|{}|{}|{}", d.ruleId, d.span.begin.file, d.span.begin.line, d.span.begin.col, d.shapeKey);
  };
  std::vector<std::map<std::string, const Diagnostic*>> byKey(runs.size());
  for (size_t i = 0; i < runs.size(); ++i)
    for (const auto& d : runs[i].diags) byKey[i].emplace(key(d, runs[i]), &d);
  const std::string hint = fmt::format("pass --block-dim {}=X,Y,Z", kernel.empty() ? "KERNEL" : kernel);
  std::vector<std::string> all;
  for (const auto& r : runs) all.push_back(r.shape.name());
  for (const auto& d : runs[0].diags) {
    std::string k = key(d, runs[0]);
    std::vector<std::string> with{runs[0].shape.name()}, withoutShapes;
    bool sameText = true;
    for (size_t i = 1; i < runs.size(); ++i) {
      auto it = byKey[i].find(k);
      if (it == byKey[i].end()) {
        withoutShapes.push_back(runs[i].shape.name());
        continue;
      }
      with.push_back(runs[i].shape.name());
      sameText = sameText && without(it->second->message, runs[i].assumption) == without(d.message, runs[0].assumption);
    }
    Diagnostic m = d;
    // (A finding that names no assumption does not depend on the shape: said as it is.)
    const bool said = !runs[0].assumption.empty() && m.message.find(runs[0].assumption) != std::string::npos;
    m.message = without(m.message, runs[0].assumption);
    if (withoutShapes.empty()) {
      std::string text;
      if (!said)
        ;
      else if (runs.size() == 1)
        text = fmt::format("; assuming a {} block ({}; the only shape tried that indexes no array past its end; {})",
                           runs[0].shape.name(), why, hint);
      else if (sameText || raceRule(m.ruleId))
        text = fmt::format("; the block shape is not known ({}; {}): the same with every shape tried ({}{})", why, hint,
                           list(all), sameText ? "" : fmt::format("; threads named for the {} block", runs[0].shape.name()));
      else {
        // Found with every shape, but its figures (ways, sectors, lanes) change with it: the
        // message's count is the first shape's, so each shape's is said beside it.
        std::string counts = fmt::format("{} with a {} block", figures(d), runs[0].shape.name());
        std::vector<const Diagnostic*> found{&d};
        for (size_t i = 1; i < runs.size(); ++i) {
          auto it = byKey[i].find(k);
          if (it != byKey[i].end()) counts += fmt::format(", {} with a {} block", figures(*it->second), runs[i].shape.name());
          if (it != byKey[i].end()) found.push_back(it->second);
        }
        rangeHeadline(m.message, found);
        text = fmt::format("; the block shape is not known ({}; {}): the count depends on it ({})", why, hint, counts);
      }
      if (!text.empty()) insertBeforeTag(m.message, text);
      // A race whose threads exist only under a guessed shape is possible at most: every shape
      // tried is not every shape the kernel may be launched with.
      if (raceRule(m.ruleId) && guessed > 0 && m.severity == Severity::Error) {
        m.severity = Severity::Warning;
        if (m.message.rfind("possible ", 0) != 0)
          m.message = (m.ruleId == "barrier-divergence" ? "possible barrier divergence: " : "possible ") + m.message;
      }
      out.push_back(std::move(m));
      continue;
    }
    if (!raceRule(m.ruleId) || guessed > 1) continue;  // depends on the guess: not said
    m.severity = Severity::Warning;
    if (m.message.rfind("possible ", 0) != 0)
      m.message = (m.ruleId == "barrier-divergence" ? "possible barrier divergence: " : "possible ") + m.message;
    insertBeforeTag(m.message, fmt::format("; only with some block shapes: found with a {} block, not with a {} block ({}; {})",
                                           list(with), list(withoutShapes), why, hint));
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace gpuopt
