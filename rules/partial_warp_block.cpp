#include "rules/partial_warp_block.h"

#include <fmt/format.h>

#include "analyzer/rule_context.h"
#include "rules/rule_util.h"

namespace gpuopt {

void PartialWarpBlockRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  // Only a shape written in the code (a launch or __launch_bounds__), not an assumed one.
  if (m.blockAssumed() || m.blockRange().isInvalid()) return;
  unsigned threads = m.threads();
  if (threads % 32 == 0) return;
  // One thread per block (`<<<1, 1>>>`): a serial helper, an initialiser or a printing demo by
  // design, not a block-size choice; on real code every such finding was noise.
  if (threads == 1) return;
  if (!rc.inLintedFile(m.blockRange().getBegin())) return;
  unsigned warps = m.warps();
  unsigned idle = warps * 32 - threads;
  double share = 100.0 * idle / (warps * 32.0);
  unsigned down = threads / 32 * 32, up = warps * 32;
  std::string shape = m.blockY() == 1 && m.blockZ() == 1 ? fmt::format("{} threads", threads)
                      : fmt::format("{}x{}x{} = {} threads", m.blockX(), m.blockY(), m.blockZ(), threads);
  bool bounds = m.blockSource() == "__launch_bounds__";
  std::string msg = fmt::format("{} of kernel '{}' has {}, not a multiple of the 32-thread warp: the block runs as {} "
                                "warp{} and the last one has {} of 32 lanes idle ({:.0f}% of the block's lanes do nothing, "
                                "in every block)",
                                bounds ? "__launch_bounds__" : "the block of this launch", m.kernel()->getNameAsString(),
                                shape, warps, warps == 1 ? "" : "s", idle, share);
  Diagnostic d = rc.make(kInfo, rc.span(m.blockRange()), msg);
  d.notes.push_back({rc.span(m.kernel()->getLocation()), "kernel declared here"});
  if (down > 0)
    d.fixHint = fmt::format("use a multiple of 32 threads per block ({} or {}) and guard the tail with 'if (i < n)'",
                            down, up);
  else
    d.fixHint = fmt::format("use at least 32 threads per block ({}) and guard the tail with 'if (i < n)'", up);
  rc.report(std::move(d));
}

}  // namespace gpuopt
