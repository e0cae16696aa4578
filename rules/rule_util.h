// Small helpers shared by the kernel rules.
#pragma once
#include <string>
#include <vector>

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallVector.h>

#include <map>

#include "analyzer/model/kernel_model.h"
#include "analyzer/report/diagnostic.h"

namespace gpuopt {

class RuleContext;

// Where an access stands among the accesses of its line (`gpuopt-lint profile` matches a finding
// to its own SASS instructions with it, analyzer/profile/match.h): added to a finding's
// predictions as "width" (bytes per lane), "lineOrder"/"lineCount" (its position among the line's
// distinct accesses of the same memory space and direction, loads or stores, in source order) and
// "lineOrderSameWidth"/"lineCountSameWidth" (the same among those of its width). `store`: the
// finding is about the access's store (else its load). A read-modify-write access judged on its
// load also gets "storeLineCount"/"storeLineCountSameWidth" (the line's stores), and every finding
// "perIteration" (1 when its figure is the one of the loop iteration its message names).
void addLineInventory(const KernelModel& m, const Access& a, bool store, const RuleContext& rc,
                      std::map<std::string, double>& predicted);

// "lanes 0, 1, 2, 3 ... 31" (at most `max` listed).

std::string laneList(llvm::ArrayRef<unsigned> lanes, size_t max = 6);
// " (at s = 16)" or "".
std::string atContext(const std::string& ctx);
// Active thread indices of warp `w` in `mask` (on the stack: this runs for every access of every
// warp).
llvm::SmallVector<unsigned, 32> warpLanes(const Mask& mask, unsigned w);
// The kind of access for messages: "load", "store", "load/store".
std::string accessKind(const Access& a);
// A finding inside a helper the kernel calls: a note at the kernel's call that reached it, naming
// the helper with its template arguments ("'load<float, 4>' is called here from 'k'").
void addCallSiteNote(const Access& a, const RuleContext& rc, Diagnostic& d);

// For an access strided by S bytes between adjacent threads (S > its size, up to 256): the
// fraction of each S-byte record that it and its siblings cover. Siblings are accesses to the same
// array in the same loop iteration whose per-thread address differs by one constant below S
// (p[i].x/.y/.z, pixel[0..3]). 0 when the access is not strided that way. `acrossIterations`: also
// the same expression in other iterations of an unrolled loop when S <= 32 bytes (`in[2*j + k]`
// for k = 0, 1: the second load hits the sectors the first fetched; global memory only), also
// inside one iteration of a run-time loop around it (a grid-stride loop).
double recordCoverage(const KernelModel& m, const Access& a, int64_t* strideOut = nullptr, bool acrossIterations = false);

// A race between lanes of one warp only that a __syncwarp() orders (lanes exchanging values
// through memory): unsafe-warp-reduce's. Not lanes storing different values into one element in
// one store, which loses all but one whatever the syncs (global-memory-race keeps those).
bool warpExchange(const KernelModel::Race& r);

// " (under the condition(s) at line(s) N, which depend on data: ...)": the data guards of a
// possible race's two accesses.
std::string possibleGuardsText(const Access& a, const Access& b);

// What stays the same when a race is found under several guessed block shapes (Diagnostic::shapeKey):
// the kind of race and the two expressions, not the threads named.
std::string raceShapeKey(const std::string& kind, bool possible, const Access& a, const Access& b);

}  // namespace gpuopt
