#include "rules/unused_block_dimension.h"

#include <fmt/format.h>

#include "analyzer/rule/rule_context.h"
#include "rules/rule_util.h"

namespace gpuopt {

void UnusedBlockDimensionRule::checkKernel(const KernelModel& m, RuleContext& rc) {
  if (m.blockAssumed() || m.blockSource().rfind("launch", 0) != 0) return;
  static const char* names[3] = {"x", "y", "z"};
  for (int axis = 1; axis <= 2; ++axis) {
    const unsigned extent = axis == 1 ? m.blockY() : m.blockZ();
    bool atomics = false;
    if (!m.duplicatedAxis(axis)) continue;
    readsThreadAxis(m.kernel(), axis, &atomics);
    bool stores = false;
    for (const auto& a : m.accesses()) stores = stores || (a.isWrite && a.space != MemSpace::Local);
    clang::SourceRange where = m.blockRange();
    bool atLaunch = where.isValid() && rc.inLintedFile(where.getBegin());
    if (!atLaunch && !rc.inLintedFile(m.kernel()->getLocation())) continue;
    const std::string kname = m.kernel()->getNameAsString();
    const char* rows = axis == 1 ? "rows" : "layers";
    std::string what = stores ? fmt::format("{}x the work, and their identical stores race", extent)
                              : fmt::format("{}x the work", extent);
    if (atomics) what += fmt::format("; each of its atomics is applied {} times", extent);
    std::string msg = fmt::format("the {} gives blockDim.{} = {}, but '{}' never reads threadIdx.{}: the {} {} of each "
                                  "block compute the same elements ({})",
                                  m.blockSource(), names[axis], extent, kname, names[axis], extent, rows, what);
    Diagnostic d = rc.make(kInfo, atLaunch ? rc.span(where) : rc.span(m.kernel()->getLocation()), msg);
    d.notes.push_back({rc.span(m.kernel()->getLocation()), fmt::format("'{}' reads threadIdx.x only{}", kname,
                                                                       axis == 2 && m.usesThreadAxis(1) ? " and .y" : "")});
    std::string smaller = axis == 1 ? fmt::format("dim3({})", m.blockX() * m.blockY() * (m.usesThreadAxis(2) ? 1 : m.blockZ()))
                                    : fmt::format("dim3({}, {})", m.blockX(), m.blockY());
    d.fixHint = fmt::format("launch a block without that dimension ({}, the grid scaled to match), or let threadIdx.{} pick "
                            "the elements (e.g. i = (blockIdx.x * blockDim.{} + threadIdx.{}) * blockDim.x + threadIdx.x)",
                            smaller, names[axis], names[axis], names[axis]);
    d.predicted = {{"duplication", extent}};
    rc.report(std::move(d));
  }
}

}  // namespace gpuopt
