// Block shapes the code does not give. When no launch gives a kernel's block shape whole (no launch
// found, a block size known only at run time, only __launch_bounds__, which bounds the thread count
// and says nothing of the shape), the kernel is evaluated under a few plausible shapes consistent with
// what the code does say: the axes a launch gives, the thread bound, whether the kernel reads
// threadIdx.y or .z at all, and (after the walk) that it indexes no fixed-size array past its end.
// A finding is kept as it is only when every plausible shape gives it with the same figures; a race
// some shapes give is said as possible with its assumption (one guessed extent), or not at all.
#pragma once
#include <string>
#include <vector>

#include "analyzer/report/diagnostic.h"

namespace gpuopt {

// What the code says about a kernel's block shape when no launch gives it whole.
struct ShapeFacts {
  unsigned known[3] = {0, 0, 0};  // extents a launch gives (0: not known)
  unsigned maxThreads = 0;        // __launch_bounds__'s bound (0: none)
  bool usesAxis[3] = {true, false, false};  // the kernel reads threadIdx.x / .y / .z
  // ... only inside the block's linear thread index (`threadIdx.x + blockDim.x * threadIdx.y`):
  // code that works with a 1-D block too, so a 1-D shape is among the plausible ones.
  bool linearOnly[3] = {false, false, false};
  unsigned defaultThreads = 256;  // the thread count assumed without a bound
};

struct ShapeGuess {
  unsigned x = 1, y = 1, z = 1;
  unsigned threads() const { return x * y * z; }
  std::string name() const;  // "256x1x1"
};

// The plausible shapes, the primary (most usual) first: one guessed extent gets its usual value and
// a smaller one (256 and 64 threads); two guessed extents get a row of a warp and half a warp (32x8
// and 16x16 for 256 threads); three, 32x4x2 and 16x4x4. Never more than 1024 threads nor more than the
// bound. When the kernel reads the guessed rows and layers only in its linear thread index, a 1-D
// block of the same count is tried too (last): a finding the rows alone give is not said.
std::vector<ShapeGuess> plausibleShapes(const ShapeFacts& f);
// How many extents of the plausible shapes are guesses (0..3).
unsigned guessedAxes(const ShapeFacts& f);

// The findings of one kernel under each plausible shape (in the order of plausibleShapes, the
// shapes that indexed an array past its end left out), with the text each shape's rules appended for
// the assumption ("; assuming a 256-thread block (...)"), merged into what is reported:
// - a finding every shape gives with the same text (the same rule at the same place, and the same
//   Diagnostic::shapeKey: a race's kind and expressions): the primary's, its assumption said as "the
//   same with every shape tried"; a finding whose figures (ways, sectors, lanes) change with the
//   shape is said with each shape's figures ("the count depends on it (8-way with a 256-thread
//   block, 2-way with a 64-thread block)"); a race is possible at most (a warning), as the shape is
//   guessed;
// - a race (missing-syncthreads, global-memory-race, unsafe-warp-reduce, barrier-divergence) only
//   some shapes give, when one extent is guessed: said as possible (a warning) with the shapes that
//   give it and those that do not;
// - anything else only some shapes give: dropped (it depends on the guess).
struct ShapeRun {
  ShapeGuess shape;
  std::string assumption;  // the suffix the rules appended ("; assuming ..."), removed before comparing
  std::vector<Diagnostic> diags;
};
std::vector<Diagnostic> mergeShapeRuns(const std::vector<ShapeRun>& runs, unsigned guessed, const std::string& why,
                                       const std::string& kernel);

}  // namespace gpuopt
