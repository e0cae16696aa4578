#include "rules/cost.h"

#include <clang/AST/ParentMapContext.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "analyzer/rule/rule_context.h"
#include "rules/host_util.h"
#include "rules/rule_util.h"

namespace gpuopt {

namespace {
bool isLoopStmt(const clang::Stmt* s) {
  return llvm::isa<clang::ForStmt>(s) || llvm::isa<clang::WhileStmt>(s) || llvm::isa<clang::DoStmt>(s) ||
         llvm::isa<clang::CXXForRangeStmt>(s);
}

// The init statement of a for loop runs once: not multiplied by the loop's trips.
bool inLoopInit(const clang::Stmt* loop, const clang::Stmt* child) {
  if (auto* f = llvm::dyn_cast<clang::ForStmt>(loop)) return f->getInit() == child;
  if (auto* r = llvm::dyn_cast<clang::CXXForRangeStmt>(loop)) return r->getInit() == child || r->getRangeStmt() == child;
  return false;
}

double tripsOf(const KernelModel& m, const clang::Stmt* loop) {
  unsigned most = 0;
  bool seen = false, capped = false;
  for (const auto& b : m.branches())
    if (b.isLoop && b.stmt == loop) {
      seen = true;
      // A bound known only at run time (a parameter's stand-in, data, a grid-stride loop): the
      // iterations walked say nothing of the real count.
      // Unless a constant bound caps it (`i < 4 && i < n`: at most 4).
      if (b.symbolic || b.data || !b.known) {
        auto n = host::tripCount(m.ast(), loop, /*bound=*/true);
        return n ? std::min<double>(static_cast<double>(*n), kUnknownTrips) : kUnknownTrips;
      }
      if (b.maxTrips == 0) capped = true;  // the walk stopped before the threads left
      most = std::max(most, b.maxTrips);
    }
  // A counted loop of constants (`for (int j = 0; j < 64; ++j)`) the walk did not finish.
  if (!seen || capped || most == 0)
    if (auto n = host::tripCount(m.ast(), loop)) return static_cast<double>(*n);
  return seen && most > 0 && !capped ? most : kUnknownTrips;
}

// Per thread: the product of the trips of the loops around `s` up to its function.
double loopProduct(const KernelModel& m, const clang::Stmt* s) {
  auto& ctx = m.ast();
  double f = 1;
  const clang::Stmt* child = s;
  clang::DynTypedNodeList parents = ctx.getParents(*s);
  for (int guard = 0; !parents.empty() && guard < 512; ++guard) {
    const clang::Stmt* p = parents[0].get<clang::Stmt>();
    if (!p) {
      // Through declarations (a variable's initialiser) up to the function.
      const clang::Decl* d = parents[0].get<clang::Decl>();
      if (!d || llvm::isa<clang::FunctionDecl>(d)) break;
      parents = ctx.getParents(*d);
      continue;
    }
    if (isLoopStmt(p) && !inLoopInit(p, child)) f *= tripsOf(m, p);
    child = p;
    parents = ctx.getParents(*p);
  }
  return f;
}

// The loops around the kernel's call that reached `s` in a helper, for `s` in that helper. An
// argument of the call (`g(cur, f(in[i]))`, read through a reference parameter inside the
// functor) is part of the call itself: its own loops already count.
double callSiteProduct(const KernelModel& m, const clang::Stmt* s, const clang::Expr* callSite) {
  if (!callSite) return 1;
  auto& ctx = m.ast();
  clang::DynTypedNodeList parents = ctx.getParents(*s);
  for (int guard = 0; !parents.empty() && guard < 512; ++guard) {
    const clang::Stmt* p = parents[0].get<clang::Stmt>();
    if (!p) break;  // a declaration: the function (or a local's initialiser: not the call's argument)
    if (p == callSite) return 1;
    parents = ctx.getParents(*p);
  }
  return loopProduct(m, callSite);
}

struct Costs {
  std::map<const clang::Expr*, double> sectors;  // per expression: sectors per block per execution (mean)
  std::map<const clang::Expr*, double> freq;     // per expression: executions per thread
  // Per expression: the share of the block's warps that run it (`if (threadIdx.y == 0)`: 1 warp
  // of 4). Traffic is counted over the active warps already (sectorsOf); run counts are weighed by
  // it for frequency impacts, which compare warp-executions.
  std::map<const clang::Expr*, double> warpShare;
  double total = 0, hottest = 1;
};

double sectorsOf(const KernelModel& m, const Access& a) {
  double n = 0;
  for (unsigned w = 0; w < m.warps(); ++w) {
    auto lanes = warpLanes(a.mask, w);
    if (lanes.empty()) continue;
    unsigned per = std::max(1u, (a.elemSize + 31) / 32);
    if (a.known) {
      std::set<int64_t> sec;
      for (unsigned t : lanes)
        for (int64_t s = floorDiv(a.addr[t], 32); s <= floorDiv(a.addr[t] + std::max(1u, a.elemSize) - 1, 32); ++s) sec.insert(s);
      n += sec.size();
    } else if (a.data) {
      n += static_cast<double>(lanes.size()) * per;
    } else {
      n += std::max<double>(1, (lanes.size() * a.elemSize + 31) / 32);
    }
  }
  return n;
}

const Costs& costsOf(const KernelModel& m) {
  // Rules ask for the same model several times; models are built one at a time per thread.
  using Key = std::tuple<const KernelModel*, const clang::FunctionDecl*, const Access*, size_t, unsigned, unsigned, unsigned>;
  static thread_local Key last{};
  static thread_local Costs c;
  Key key{&m, m.kernel(), m.accesses().data(), m.accesses().size(), m.blockX(), m.blockY(), m.blockZ()};
  if (last == key) return c;
  last = key;
  c = Costs{};
  std::map<const clang::Expr*, std::pair<double, unsigned>> sum;  // sectors over the walked executions
  std::map<const clang::Expr*, const Access*> first;
  std::map<const clang::Expr*, std::vector<bool>> warpsOf;
  for (const auto& a : m.accesses()) {
    if (!a.expr) continue;
    first.try_emplace(a.expr, &a);
    auto& ws = warpsOf[a.expr];
    ws.resize(m.warps());
    for (unsigned w = 0; w < m.warps(); ++w)
      if (!ws[w] && !warpLanes(a.mask, w).empty()) ws[w] = true;
    if (a.space != MemSpace::Global) continue;
    auto& s = sum[a.expr];
    s.first += sectorsOf(m, a);
    s.second += 1;
  }
  for (const auto& [e, a] : first) {
    double f = loopProduct(m, e) * callSiteProduct(m, e, a->callSite);
    c.freq[e] = f;
    const auto& ws = warpsOf[e];
    const double share = m.warps() ? static_cast<double>(std::count(ws.begin(), ws.end(), true)) / m.warps() : 1;
    c.warpShare[e] = share > 0 ? share : 1;
    c.hottest = std::max(c.hottest, f * c.warpShare[e]);
  }
  for (const auto& [e, s] : sum) {
    c.sectors[e] = s.second ? s.first / s.second : 0;
    c.total += c.sectors[e] * c.freq[e];
  }
  return c;
}

std::string shortName(const KernelModel& m) { return m.kernel() ? m.kernel()->getNameAsString() : std::string("the kernel"); }

std::string percent(double x) {
  if (x >= 0.995) return "100%";
  if (x >= 0.01) return fmt::format("~{:.0f}%", x * 100);
  return "<1%";
}
}  // namespace

double frequencyOf(const KernelModel& m, const clang::Stmt* s, const clang::Expr* callSite) {
  if (!s) return 1;
  return loopProduct(m, s) * callSiteProduct(m, s, callSite);
}

double hottestFrequency(const KernelModel& m) { return costsOf(m).hottest; }

double globalTraffic(const KernelModel& m, const clang::Expr* e) {
  const Costs& c = costsOf(m);
  auto s = c.sectors.find(e);
  auto f = c.freq.find(e);
  return s == c.sectors.end() || f == c.freq.end() ? 0 : s->second * f->second;
}

double kernelGlobalTraffic(const KernelModel& m) { return costsOf(m).total; }

void scaleByProgramShare(const KernelModel& m, Diagnostic& d) {
  const auto& p = m.programShare();
  if (p.share >= 1 || d.impact < 0) return;
  d.impact *= p.share;
  d.impactText += fmt::format("; '{}' is {} of the program's estimated kernel work ({})", shortName(m), percent(p.share), p.why);
}

void setTrafficImpact(const KernelModel& m, const Access& a, Diagnostic& d) {
  double total = kernelGlobalTraffic(m);
  if (total <= 0) return;
  d.impact = std::clamp(globalTraffic(m, a.expr) / total, 0.0, 1.0);
  d.impactText = fmt::format("{} of '{}''s global traffic", percent(d.impact), shortName(m));
  scaleByProgramShare(m, d);
}

void setFrequencyImpact(const KernelModel& m, const clang::Stmt* s, const clang::Expr* callSite, Diagnostic& d) {
  double hot = hottestFrequency(m), f = frequencyOf(m, s, callSite);
  const Costs& c = costsOf(m);
  if (auto* e = llvm::dyn_cast_or_null<clang::Expr>(s))
    if (auto w = c.warpShare.find(e); w != c.warpShare.end()) f *= w->second;
  d.impact = std::clamp(f / hot, 0.0, 1.0);
  if (d.impact >= 0.995) d.impactText = fmt::format("in '{}''s hottest code", shortName(m));
  else d.impactText = fmt::format("runs {} as often as '{}''s hottest access", percent(d.impact), shortName(m));
  scaleByProgramShare(m, d);
}

void setHostImpact(bool repeatsWithDeviceWork, Diagnostic& d) {
  d.impact = repeatsWithDeviceWork ? 1.0 : 0.02;
  d.impactText = repeatsWithDeviceWork ? "repeated with device work"
                                       : "setup or verification: runs once or in a loop without device work";
}

bool loopHasDeviceWork(clang::ASTContext& ctx, const clang::Stmt* loop) {
  for (int depth = 0; loop && depth < 8; ++depth, loop = host::enclosingLoop(ctx, loop))
    for (const auto& e : host::iterationEvents(ctx, loop))
      if (e.kind == host::HostEvent::Launch || e.kind == host::HostEvent::Library) return true;
  return false;
}

std::string byteText(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.0f} MiB", b / (1024.0 * 1024));
  if (b >= 1024) return fmt::format("{:.0f} KiB", b / 1024);
  return fmt::format("{:.0f} bytes", b);
}
std::string usText(double us) {
  if (us >= 1000) return fmt::format("{:.1f} ms", us / 1000);
  return fmt::format("{:.0f} us", us);
}

void setHostLoopImpact(clang::ASTContext& ctx, const clang::Stmt* loop, const clang::CallExpr* own, const HostSaving& s,
                       Diagnostic& d, bool requireDeviceWork) {
  if (!loop || (requireDeviceWork && !loopHasDeviceWork(ctx, loop))) {
    setHostImpact(false, d);
    return;
  }
  // Every loop of the nest counted with constants: at most a few runs in all.
  int64_t runs = 1;
  bool allKnown = true;
  for (const clang::Stmt* l = loop; l && allKnown; l = host::enclosingLoop(ctx, l)) {
    auto n = host::tripCount(ctx, l);
    if (!n || *n < 0 || runs > (int64_t(1) << 30)) allKnown = false;
    else runs *= *n;
  }
  if (allKnown && runs <= 10) {
    d.impact = 0.05;
    d.impactText = fmt::format("runs {} time{} in all: set-up scale", runs, runs == 1 ? "" : "s");
    return;
  }
  const auto events = host::iterationEvents(ctx, loop);
  const host::HostEvent* self = nullptr;
  for (const auto& e : events)
    if (e.call == own) self = &e;
  // Once per step of an outer loop whose iteration launches kernels in a loop of its own (a size
  // sweep around a timing loop): that inner loop is the hot part, the finding is its set-up.
  if (self && !self->nestedLoop)
    for (const auto& e : events)
      if ((e.kind == host::HostEvent::Launch || e.kind == host::HostEvent::Library) && e.nestedLoop) {
        auto n = host::tripCount(ctx, e.nestedLoop);
        if (n && *n < 10) continue;
        d.impact = 0.05;
        d.impactText = fmt::format("once per step of this loop, whose inner loop at line {} launches the device work{}",
                                   ctx.getSourceManager().getExpansionLineNumber(e.nestedLoop->getBeginLoc()),
                                   n ? fmt::format(" ({} times a step)", *n) : std::string());
        return;
      }
  // Only under a condition inside the loop (a phase switch, periodic output): not every iteration.
  if (self && self->conditional) {
    d.impact = 0.08;
    d.impactText = "only under a condition inside the loop: not every iteration";
    return;
  }
  if (s.savedUs <= 0) {
    setHostImpact(true, d);
    return;
  }
  // The rest of one iteration, at least.
  double restUs = s.ownRestUs;
  double copied = 0;
  unsigned allocs = 0, unknownCopies = 0;
  for (const auto& e : events) {
    if (e.call == own) continue;
    double times = 1;
    if (e.nestedLoop)
      if (auto n = host::tripCount(ctx, e.nestedLoop); n && *n > 0) times = static_cast<double>(*n);
    if (e.kind == host::HostEvent::Copy) {
      if (auto b = host::copyBytes(ctx, e.copy); b && *b > 0) {
        restUs += times * (kSmallCopyUs + static_cast<double>(*b) / kPinnedBytesPerUs);  // latency and bytes
        copied += times * static_cast<double>(*b);
      } else {
        restUs += times * kSmallCopyUs;
        unknownCopies += static_cast<unsigned>(std::min(times, 1e6));
      }
    } else if (e.kind == host::HostEvent::Alloc) {
      restUs += times * (e.name == "cudaMallocHost" || e.name == "cudaHostAlloc" ? kMallocHostPairUs : kMallocPairUs);
      allocs += static_cast<unsigned>(std::min(times, 1e6));
    }
  }
  double share = std::clamp(s.savedUs / (s.savedUs + restUs), 0.0, 1.0);
  d.impact = share;
  std::vector<std::string> rest;
  if (copied > 0) rest.push_back("copies " + byteText(copied));
  if (unknownCopies) rest.push_back(fmt::format("{} cop{} of run-time size", unknownCopies, unknownCopies == 1 ? "y" : "ies"));
  if (allocs) rest.push_back(fmt::format("{} allocation{}", allocs, allocs == 1 ? "" : "s"));
  d.impactText = fmt::format("~{:.0f}% of the loop's estimated time per iteration: {}{}", std::max(1.0, share * 100), s.what,
                             rest.empty() ? std::string()
                                          : fmt::format(", against at least {} for the rest (it also {})", usText(restUs),
                                                        fmt::format("{}", fmt::join(rest, ", "))));
}

void dumpCostIfAsked(const KernelModel& m, const RuleContext& rc) {
  static const char* path = std::getenv("GPUOPT_COST_DUMP");
  if (!path || !*path || !m.kernel()) return;
  const Costs& c = costsOf(m);
  std::map<std::pair<std::string, unsigned>, double> perLine;
  for (const auto& [e, s] : c.sectors) {
    SourceSpan sp = rc.span(e);
    perLine[{sp.begin.file, sp.begin.line}] += s * c.freq.at(e);
  }
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::ofstream out(path, std::ios::app);
  for (const auto& [where, traffic] : perLine)
    out << m.kernel()->getNameAsString() << "\t" << where.first << "\t" << where.second << "\t" << traffic << "\n";
}

}  // namespace gpuopt
