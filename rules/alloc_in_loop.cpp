#include "rules/alloc_in_loop.h"

#include <clang/ASTMatchers/ASTMatchFinder.h>
#include <clang/ASTMatchers/ASTMatchers.h>
#include <fmt/format.h>

#include <map>

#include "rules/cost.h"
#include "analyzer/rule/rule_context.h"
#include "rules/host_util.h"

namespace gpuopt {
namespace {

using namespace clang;
using namespace clang::ast_matchers;
using namespace gpuopt::host;

// Which call frees what each allocation call allocates.
const std::map<std::string, std::string>& freeOf() {
  static const std::map<std::string, std::string> m = {
      {"cudaMalloc", "cudaFree"},           {"cudaMallocPitch", "cudaFree"},        {"cudaMallocManaged", "cudaFree"},
      {"cudaMalloc3D", "cudaFree"},         {"cudaMallocHost", "cudaFreeHost"},     {"cudaHostAlloc", "cudaFreeHost"},
      {"cudaMallocArray", "cudaFreeArray"}, {"cudaMalloc3DArray", "cudaFreeArray"}, {"cudaHostRegister", "cudaHostUnregister"},
  };
  return m;
}

// The buffer an allocation or free names: `(void**)&d_tmp` and `d_tmp` are both `d_tmp`.
const Expr* target(const CallExpr* c) {
  if (c->getNumArgs() == 0) return nullptr;
  const Expr* e = bare(c->getArg(0));
  if (auto* u = dyn_cast<UnaryOperator>(e); u && u->getOpcode() == UO_AddrOf) e = bare(u->getSubExpr());
  return e;
}

bool sameTarget(ASTContext& ctx, const CallExpr* alloc, const CallExpr* free) {
  const Expr* a = target(alloc);
  const Expr* f = target(free);
  if (!a || !f) return false;
  if (sameExpr(ctx, a, f)) return true;
  // cudaMalloc3D(&p, ...) ... cudaFree(p.ptr)
  if (auto* m = dyn_cast<MemberExpr>(f)) return sameExpr(ctx, a, m->getBase());
  return false;
}

std::string heavy(const std::string& fn) {
  if (fn == "cudaMallocHost" || fn == "cudaHostAlloc" || fn == "cudaHostRegister")
    return "pinning host pages is the most expensive of these calls (the driver locks and maps every page), and "
           "the free synchronises the device";
  if (fn == "cudaMallocManaged") return "each is a driver call, the free synchronises the device, and the new "
                                        "pages fault in again on first touch";
  return "each is a driver call, and the free synchronises the whole device, so the GPU idles between iterations";
}

}  // namespace

void AllocInLoopRule::checkTranslationUnit(ASTContext& ctx, RuleContext& rc) {
  const CallIndex index(ctx);
  auto allocs = match(callExpr(callee(functionDecl(hasAnyName("cudaMalloc", "cudaMallocPitch", "cudaMallocManaged",
                                                              "cudaMalloc3D", "cudaMallocHost", "cudaHostAlloc",
                                                              "cudaMallocArray", "cudaMalloc3DArray", "cudaHostRegister"))))
                           .bind("alloc"),
                       ctx);
  std::set<std::pair<const Stmt*, const Stmt*>> done;
  for (const auto& node : allocs) {
    const auto* alloc = node.getNodeAs<CallExpr>("alloc");
    if (alloc->containsErrors()) continue;
    std::string fn = calleeName(alloc);
    const std::string& freeFn = freeOf().at(fn);
    for (const LoopSite& site : loopSites(ctx, index, alloc)) {
      const Stmt* anchor = site.via.empty() ? alloc : site.via.front();
      if (!rc.inLintedFile(anchor->getBeginLoc()) || !done.insert({anchor, site.loop}).second) continue;
      // Grown on demand (`if (n > cap) { cudaFree(p); cudaMalloc(&p, n); }`): not every iteration.
      if (conditionalIn(ctx, anchor, site.loop)) continue;
      auto events = iterationEvents(ctx, site.loop);
      const HostEvent* own = nullptr;
      for (const auto& ev : events)
        if (ev.call == alloc && ev.via == site.via) own = &ev;
      if (!own || own->conditional || own->nestedLoop) continue;
      // Only a buffer freed again in the same iteration is churn; a loop that allocates one buffer
      // per element of an array (cudaMalloc(&d[i], ...)) and keeps them is set-up.
      const HostEvent* free = nullptr;
      for (const auto& ev : events)
        if (ev.kind == HostEvent::Free && ev.name == freeFn && ev.via == site.via && !ev.conditional &&
            ev.nestedLoop == own->nestedLoop && sameTarget(ctx, alloc, ev.call))
          free = &ev;
      if (!free) continue;
      // A loop of kernel launches (or copies) inside the iteration (a benchmark's repeat loop per problem size)
      // amortises the allocation: the iteration is a sweep step, not one unit of work.
      bool amortised = false;
      for (const auto& ev : events)
        if ((ev.kind == HostEvent::Launch || ev.kind == HostEvent::Library || ev.kind == HostEvent::Copy) && ev.nestedLoop &&
            ev.nestedLoop != own->nestedLoop)
          amortised = true;
      if (amortised) continue;
      std::optional<int64_t> trips = tripCount(ctx, site.loop);
      std::string buf = spelled(ctx, target(alloc));
      if (buf.empty()) buf = rc.text(target(alloc));
      std::string per = trips ? fmt::format("in each of {} iterations", *trips) : "in every iteration";
      std::string msg;
      if (site.via.empty())
        msg = fmt::format("{} and {} of '{}' {} of this loop: {}", fn, freeFn, buf, per, heavy(fn));
      else
        msg = fmt::format("call to '{}' in a loop allocates '{}' with {} and frees it with {} {}: {}",
                          site.via.front()->getDirectCallee()->getNameAsString(), buf, fn, freeFn, per, heavy(fn));
      Diagnostic d = rc.make(kInfo, rc.span(anchor), msg);
      // What the pair costs (measured) against the rest of the iteration; a loop without device work
      // still allocates once per iteration.
      HostSaving saving;
      saving.savedUs = fn == "cudaMallocHost" || fn == "cudaHostAlloc" ? kMallocHostPairUs : kMallocPairUs;
      saving.what = fmt::format("a {}/{} pair takes ~{} (measured on H100)", fn, freeFn, usText(saving.savedUs));
      setHostLoopImpact(ctx, site.loop, alloc, saving, d, /*requireDeviceWork=*/false);
      if (!site.via.empty()) d.notes.push_back({rc.span(alloc), fmt::format("allocated here, by '{}'", fn)});
      d.notes.push_back({rc.span(free->call), fmt::format("freed here, in the same iteration")});
      d.notes.push_back({rc.span(SourceRange(site.loop->getBeginLoc(), site.loop->getBeginLoc())),
                         trips ? fmt::format("inside this loop ({} iterations)", *trips) : "inside this loop"});
      if (fn == "cudaMalloc" || fn == "cudaMallocPitch" || fn == "cudaMalloc3D")
        d.fixHint = fmt::format("allocate '{}' once before the loop (at the largest size it needs) and free it after the "
                                "loop; if the size changes, use cudaMallocAsync/cudaFreeAsync on a stream, whose memory "
                                "pool reuses freed memory (raise cudaMemPoolAttrReleaseThreshold to keep it)",
                                buf);
      else
        d.fixHint = fmt::format("allocate '{}' once before the loop (at the largest size it needs) and free it after the "
                                "loop",
                                buf);
      rc.report(std::move(d));
    }
  }
}

}  // namespace gpuopt
