// Static cost of a finding's place (issue 28): how often it runs relative to the kernel's hottest
// access, and an access's share of the kernel's estimated global-memory traffic. Findings carry
// it as `impact` (0..1); below a rule's `min-impact` (default kDefaultMinImpact) a finding is a note.
//
// Frequency: executions per thread, the product of the trip counts of the loops around the place
// (in the kernel and, for a helper, around the kernel's call of it). A loop's trip count is the
// most iterations the model walked when every thread left it (Branch::maxTrips) over a condition
// of constants; otherwise (a bound known only at run time, a grid-stride loop) kUnknownTrips.
// Traffic: per global access, the 32-byte sectors each warp of the block touches per execution
// (known addresses: counted; data-dependent: one per lane that may differ; addresses over run-time
// values: the contiguous ideal), averaged over the walked executions, times its frequency.
#pragma once
#include <string>

#include "analyzer/report/diagnostic.h"

namespace clang {
class ASTContext;
class Expr;
class Stmt;
}  // namespace clang

namespace gpuopt {

class RuleContext;
class KernelModel;
struct Access;

inline constexpr double kUnknownTrips = 16;
inline constexpr double kDefaultMinImpact = 0.1;

// Executions per thread of a statement of the kernel (or of a helper reached through `callSite`).
double frequencyOf(const KernelModel& m, const clang::Stmt* s, const clang::Expr* callSite = nullptr);
// The most frequent access of the kernel (executions per thread), at least 1.
double hottestFrequency(const KernelModel& m);
// Estimated global sectors of one access expression (all its executions, per block) and of the
// whole kernel.
double globalTraffic(const KernelModel& m, const clang::Expr* e);
double kernelGlobalTraffic(const KernelModel& m);

// Sets d.impact and its text tag: a global access by its share of the kernel's traffic, anything
// else in a kernel by its frequency relative to the hottest access.
// Scales a kernel finding's impact by the kernel's share of its program's estimated kernel work
// (LaunchIndex::programShare) and says why in the impact text; nothing when the share is 1.
void scaleByProgramShare(const KernelModel& m, Diagnostic& d);
void setTrafficImpact(const KernelModel& m, const Access& a, Diagnostic& d);
void setFrequencyImpact(const KernelModel& m, const clang::Stmt* s, const clang::Expr* callSite, Diagnostic& d);
// Host code: a copy, allocation or loop that repeats with device work (a loop that launches
// kernels or calls a library) is hot; code that runs once or in a loop without device work
// (setup, verification) is low.
void setHostImpact(bool repeatsWithDeviceWork, Diagnostic& d);
// Whether `loop` (or a loop around it) launches kernels or calls a GPU library in its iterations.
bool loopHasDeviceWork(clang::ASTContext& ctx, const clang::Stmt* loop);

// The developer hook behind bench/impact_rank.py: with GPUOPT_COST_DUMP=FILE set, every kernel
// model's per-line estimated global traffic is appended to FILE (kernel, file, line, sectors).
void dumpCostIfAsked(const KernelModel& m, const RuleContext& rc);

}  // namespace gpuopt
