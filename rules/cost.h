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

// A host finding's cost within its loop (issue 28), from figures measured on the H100
// (docs/measurements.md): what fixing it saves per iteration (`savedUs`, 0 when not known) against
// a lower bound of the rest of the iteration: each copy of a known size at the pinned rate
// (54.8 GB/s), of a size known only at run time at a small copy's latency (5.8 us), each
// cudaMalloc 69 us and cudaMallocHost 1.33 ms (an allocation and its free), launches and library
// calls nothing (their work is not known), events of a loop inside the iteration times its trip
// count when constant. The share saved/(saved + rest) can only be smaller than estimated. A loop
// nest whose trip counts are all constants and come to at most 10 runs is set-up scale. Sets
// d.impact and its text, as setHostImpact does, when the loop repeats with device work.
struct HostSaving {
  double savedUs = 0;   // per iteration; 0: not known
  double ownRestUs = 0; // what the finding's own call still costs after the fix (a copy at the pinned rate)
  std::string what;     // "pinning saves ~1.0 ms per 8 MiB copy"
};
// `requireDeviceWork`: a loop without device work is set-up or verification (copies); an
// allocation repeated there is still judged by its share.
void setHostLoopImpact(clang::ASTContext& ctx, const clang::Stmt* loop, const clang::CallExpr* own, const HostSaving& s,
                       Diagnostic& d, bool requireDeviceWork = true);
// "8 MiB", "1.0 ms": sizes and times in host findings' impact texts.
std::string byteText(double bytes);
std::string usText(double us);
// Measured on the H100 (docs/measurements.md, host transfer demos).
inline constexpr double kPinnedBytesPerUs = 54.8e3;     // 256 MiB pinned host to device: 4.9 ms
inline constexpr double kPageableH2DBytesPerUs = 7.2e3; // 256 MiB pageable host to device: 37.4 ms
inline constexpr double kPageableD2HBytesPerUs = 10.3e3;// 256 MiB pageable device to host: 26.0 ms
inline constexpr double kSmallCopyUs = 5.8;             // 4096 copies of 4 B: 23.7 ms
inline constexpr double kMallocPairUs = 69;             // cudaMalloc + cudaFree, 200 iterations
inline constexpr double kMallocHostPairUs = 1330;       // cudaMallocHost + cudaFreeHost

// The developer hook behind bench/impact_rank.py: with GPUOPT_COST_DUMP=FILE set, every kernel
// model's per-line estimated global traffic is appended to FILE (kernel, file, line, sectors).
void dumpCostIfAsked(const KernelModel& m, const RuleContext& rc);

}  // namespace gpuopt
