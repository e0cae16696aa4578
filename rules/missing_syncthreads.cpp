#include "rules/missing_syncthreads.h"

#include <fmt/format.h>

#include <set>

#include "analyzer/rule/rule_context.h"
#include "rules/rule_util.h"

namespace gpuopt {

void MissingSyncthreadsRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  std::set<const clang::Expr*> reported;
  for (const auto& r : m.sharedRaces()) {
    if (r.warpSynchronous) continue;  // owned by unsafe-warp-reduce
    const Access& a = *r.first;
    const Access& b = *r.second;
    if (!rc.inLintedFile(b.expr->getBeginLoc())) continue;
    if (!reported.insert(b.expr).second) continue;
    bool bWrites = b.isWrite, aWrites = a.isWrite;
    std::string kind = bWrites ? (aWrites ? "write-after-write" : "write-after-read") : "read-after-write";
    std::string elem = elementName(b, r.byteAddr);
    std::string msg;
    if (r.standIn) {
      // The index depends on a value known only at run time (a seed, a size): which threads meet
      // is not known, so none is named.
      const Access& dep = b.paramAddr ? b : a;
      std::string what = dep.paramSrc ? fmt::format("'{}'", dep.paramSrc->getNameAsString()) : std::string("a parameter");
      msg = fmt::format("possible {} race on shared memory '{}': the index of '{}' depends on {}, a value known only at "
                        "run time, so threads of the block may {} one element in the same barrier interval",
                        kind, b.baseName.empty() ? rc.text(b.expr) : b.baseName, rc.text(dep.expr), what,
                        kind == "write-after-write" ? "write" : "read and write");
      if (!a.guards.empty() || !b.guards.empty()) msg += possibleGuardsText(a, b);
    } else {
      msg = fmt::format("{}{} race on shared memory: {} {} {}, {} by {} in the same barrier interval",
                        r.possible ? "possible " : "", kind, m.threadName(r.t2), bWrites ? "writes" : "reads",
                        elem, aWrites ? "written" : "read", m.threadName(r.t1));
      // A guard the model could not decide (data-dependent) may keep the two apart.
      if (r.possible) msg += possibleGuardsText(a, b);
    }
    msg += atContext(b.context);
    if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
    Diagnostic d = rc.make(kInfo, rc.span(b.expr), msg);
    d.shapeKey = raceShapeKey(kind, r.possible, a, b);
    if (r.possible) d.severity = Severity::Warning;  // a definite race is an error
    addCallSiteNote(b, rc, d);
    if (r.standIn) {
      if (&a != &b && a.expr != b.expr) d.notes.push_back({rc.span(a.expr), fmt::format("the other access{}", atContext(a.context))});
      d.fixHint = "check whether the index can pick another thread's element for the values it takes at run time; if it "
                  "can, give each thread its own element (or combine colliding updates with an atomic)";
      rc.report(std::move(d));
      continue;
    }
    d.notes.push_back({rc.span(a.expr), fmt::format("{} {} {} here{}", m.threadName(r.t1), aWrites ? "writes" : "reads",
                                                    elementName(a, r.firstByteAddr), atContext(a.context))});
    if (kind == "read-after-write")
      d.fixHint = "put __syncthreads() between the write and the read so every write is visible first";
    else if (kind == "write-after-read")
      d.fixHint = "read the value into a register, __syncthreads(), then write (or write to a second buffer)";
    else if (a.expr == b.expr)
      d.fixHint = "one statement writes it from several threads, so no barrier can order the writes: let one thread "
                  "write (if (threadIdx.x == 0)), give each thread its own element, or use an atomic";
    else
      d.fixHint = "give each thread its own element, or order the writes with __syncthreads() (or use an atomic)";
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
