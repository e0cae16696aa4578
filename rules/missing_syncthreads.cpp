#include "rules/missing_syncthreads.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "analyzer/rule/rule_context.h"
#include "rules/rule_util.h"

namespace gpuopt {

void MissingSyncthreadsRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  // Reads of what one write stores, in the same interval, all miss the same barrier: one finding
  // at the first read, the others as its related places (ccminer's sha256d: a table filled by 64
  // threads, then read at 46 places of an unrolled round with no __syncthreads() between; seventh
  // stop check). Keyed by the write and by whether the race is definite.
  using Key = std::pair<const clang::Expr*, bool>;
  std::map<Key, std::vector<const clang::Expr*>> readsOf;
  auto rawKey = [](const Race& r) -> std::optional<Key> {
    if (r.warpSynchronous || r.standIn || r.second->isWrite || !r.first->isWrite) return std::nullopt;
    return Key{r.first->expr, r.possible};
  };
  // Only where that write is the only one to the array in a race (a table filled, then read):
  // where other statements write it too, each read may race with those as well, which a barrier
  // after the first write does not order.
  std::map<const void*, std::set<const clang::Expr*>> writesTo;
  for (const auto& r : m.sharedRaces())
    for (const Access* x : {r.first, r.second})
      if (x->isWrite) writesTo[x->base].insert(x->expr);
  for (const auto& r : m.sharedRaces()) {
    if (!rc.inLintedFile(r.second->expr->getBeginLoc())) continue;
    if (writesTo[r.first->base].size() != 1) continue;
    if (auto k = rawKey(r)) {
      auto& v = readsOf[*k];
      if (std::find(v.begin(), v.end(), r.second->expr) == v.end()) v.push_back(r.second->expr);
    }
  }
  std::set<const clang::Expr*> reported;
  for (const auto& r : m.sharedRaces()) {
    if (r.warpSynchronous) continue;  // owned by unsafe-warp-reduce
    const Access& a = *r.first;
    const Access& b = *r.second;
    if (!rc.inLintedFile(b.expr->getBeginLoc())) continue;
    const std::vector<const clang::Expr*>* sameWrite = nullptr;
    if (auto k = rawKey(r); k && readsOf.count(*k)) {
      sameWrite = &readsOf[*k];
      // Folded into the first read of this write; a race of this read with another write is
      // still its own finding.
      if (sameWrite->front() != b.expr) continue;
    }
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
    std::vector<SourceSpan> foldedReads;
    if (sameWrite && sameWrite->size() > 1) {
      std::set<unsigned> lines;
      const unsigned own = rc.span(b.expr).begin.line;
      for (size_t i = 1; i < sameWrite->size(); ++i) {
        foldedReads.push_back(rc.span((*sameWrite)[i]));
        if (foldedReads.back().begin.line != own) lines.insert(foldedReads.back().begin.line);
      }
      std::string list;
      size_t n = 0;
      for (unsigned ln : lines) {
        if (n++ == 8) {
          list += ", ...";
          break;
        }
        list += (list.empty() ? "" : ", ") + std::to_string(ln);
      }
      msg += fmt::format("; {} more read{} of what that write stores race with it the same way, one barrier fixes "
                         "them all{}",
                         sameWrite->size() - 1, sameWrite->size() == 2 ? "" : "s",
                         list.empty() ? std::string() : fmt::format(" (line{} {})", lines.size() == 1 ? "" : "s", list));
    }
    if (m.blockAssumed()) msg += "; assuming " + m.blockDescription();
    Diagnostic d = rc.make(kInfo, rc.span(b.expr), msg);
    d.related.insert(d.related.end(), foldedReads.begin(), foldedReads.end());
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
