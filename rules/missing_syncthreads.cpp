#include "rules/missing_syncthreads.h"

#include <fmt/format.h>

#include <set>

#include "analyzer/rule/rule_context.h"
#include "rules/rule_util.h"

namespace gpuopt {

void MissingSyncthreadsRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  if (multiDimShapeGuessed(m)) return;  // which threads share data is a guess (rule_util.h)
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
    std::string msg = fmt::format("{}{} race on shared memory: {} {} {}, {} by {} in the same barrier interval",
                                  r.possible ? "possible " : "", kind, m.threadName(r.t2), bWrites ? "writes" : "reads",
                                  elem, aWrites ? "written" : "read", m.threadName(r.t1));
    // A guard the model could not decide (data-dependent) may keep the two apart.
    if (r.possible) msg += possibleGuardsText(a, b);
    msg += atContext(b.context);
    if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
    Diagnostic d = rc.make(kInfo, rc.span(b.expr), msg);
    if (r.possible) d.severity = Severity::Warning;  // a definite race is an error
    addCallSiteNote(b, rc, d);
    d.notes.push_back({rc.span(a.expr), fmt::format("{} {} {} here{}", m.threadName(r.t1), aWrites ? "writes" : "reads",
                                                    elementName(a, r.firstByteAddr), atContext(a.context))});
    if (kind == "read-after-write")
      d.fixHint = "put __syncthreads() between the write and the read so every write is visible first";
    else if (kind == "write-after-read")
      d.fixHint = "read the value into a register, __syncthreads(), then write (or write to a second buffer)";
    else
      d.fixHint = "give each thread its own element, or order the writes with __syncthreads() (or use an atomic)";
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
