// Launch discovery: which block shapes each kernel of a translation unit is launched with.
// Reads `<<<grid, block>>>` anywhere in the translation unit (functions, lambdas, functors, host
// function templates, device-side launches) and cudaLaunchKernel / cudaLaunchCooperativeKernel /
// cudaLaunchKernelEx; block sizes in constants, variables never reassigned, dim3 temporaries and
// dim3 variables whose members are set one by one.
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpuopt {

class HostValues;
class ProgramCalls;
namespace launch_detail {
struct HostCalls;
}

class LaunchIndex {
 public:
  // `program`: the call sites of the program's other files (a compile database's), through which
  // a launch wrapper no caller in this unit binds is followed (HostValues::setProgram); nullptr:
  // this unit's own calls only.
  explicit LaunchIndex(clang::ASTContext& ctx, const ProgramCalls* program = nullptr);
  // The names whose program call sites the index read, with their answers' fingerprints.
  const std::map<std::string, std::string>& programFacts() const { return programFacts_; }
  struct Shape {
    unsigned x = 0, y = 1, z = 1;
    std::string where;  // "launch at line N"
    // The block argument of the launch (where a finding about the shape points).
    clang::SourceRange range;
    // Blocks in the grid of that launch: 0 when not a compile-time value.
    unsigned gridBlocks = 0;
    // The grid's dimensions when compile-time values and the same in every launch of this block
    // shape, else 0 (the model then uses a representative gridDim).
    unsigned grid[3] = {0, 0, 0};
  };
  // nullptr when no launch of `kernel` with a readable block shape exists.
  const Shape* find(const clang::FunctionDecl* kernel) const;
  // Every distinct readable block shape `kernel` is launched with (the first launch of each).
  std::vector<Shape> all(const clang::FunctionDecl* kernel) const;
  // A launch of `kernel` whose block shape could not be read (a run-time value, a function
  // pointer): "launch at line N", or nullptr.
  const std::string* unreadable(const clang::FunctionDecl* kernel) const;
  // A kernel whose every launch in the unit is dead (a branch the constants decide, `int mode = 10;
  // if (mode == 5) k<<<...>>>`): the first such launch, else null. Nothing here runs the kernel.
  const clang::Expr* onlyDeadLaunch(const clang::FunctionDecl* kernel) const;
  // For such a launch, the axes that are known all the same (`dim3 b; b.x = 1; b.y = n;`: x = 1,
  // z = 1): 0 for an axis known only at run time; nullptr when no axis is known, or the launches
  // disagree on every axis.
  const std::array<unsigned, 3>* partialShape(const clang::FunctionDecl* kernel) const;
  // The bytes the buffer passed as parameter `index` of `kernel` holds, when every launch of the
  // kernel passes a buffer allocated with a compile-time size (cudaMalloc/cudaMallocManaged of a
  // local or global pointer, also through the parameters of the host functions that launch it):
  // the largest; 0 when not known.
  uint64_t allocatedBytes(const clang::FunctionDecl* kernel, unsigned index) const;
  // Whether every launch of `kernel` passes as parameter `index` a buffer that the launching
  // function last wrote with a scan (thrust::exclusive_scan / inclusive_scan, in place or not) of
  // flags a kernel set to 0 or 1 only: neighbouring entries differ by 0 or 1 (stream compaction's
  // output positions).
  bool prefixOfFlags(const clang::FunctionDecl* kernel, unsigned index) const;
  // The integer every live launch of `kernel` passes as parameter `index` (`k<<<g, b>>>(1u, p)`,
  // also through a launch wrapper's parameters, as the block shape is followed), when the launches
  // all pass the same compile-time value; nullopt when any passes another or an unknown one.
  std::optional<int64_t> argumentConstant(const clang::FunctionDecl* kernel, unsigned index) const;
  // Whether every live launch of `kernel` passes as parameter `index` a tensor view's stride
  // (`t.stride(0)`, HostValues::viewStride), also through a launch wrapper's parameters.
  bool viewStride(const clang::FunctionDecl* kernel, unsigned index) const;
  // What share of its program's estimated kernel work `kernel` is (issue 28: the cost of a kernel
  // within its program), for kernels whose every launch is reached from this file's `main`. Each
  // kernel weighs launches (the trip counts of the host loops around its launches and around the
  // calls that reach them) x blocks x threads x loop trips per thread; against each other kernel,
  // the factors the code gives bound it (launch_weights.cpp: an unknown factor of `kernel` leaves it
  // unbounded, of the other kernel counts at its lower bound). The share is the smallest such bound
  // when below 0.5, else (all its factors constants) its work over one wave of the GPU when less;
  // otherwise 1. `why` says what it compared.
  struct ProgramShare {
    double share = 1;
    std::string why;  // "'pack' is launched once with 4 blocks; 'sgemm' is launched in the loop at line 98 ..."
  };
  ProgramShare programShare(const clang::FunctionDecl* kernel) const;
  // One wave of an H100: 132 SMs x 2048 resident threads. A kernel of a program whose launches,
  // blocks, threads and loops are all constants and come to less is a share of this instead.
  static constexpr double kWave = 132.0 * 2048;

 private:
  // One launch site, followed through the call sites of the functions around it when its kernel,
  // block, grid or a condition around it depends on their parameters (launch wrappers); a launch the
  // constants make dead launches nothing.
  void resolveLaunch(clang::ASTContext& ctx, HostValues& hv, const clang::Expr* call, const clang::Expr* callee,
                     const clang::Expr* block, const clang::Expr* grid, const clang::Expr* config);
  void record(clang::ASTContext& ctx, const clang::FunctionDecl* k, bool ok, const unsigned d[3], bool some,
              const unsigned p[3], const std::string& where, clang::SourceRange range, bool gridKnown, const unsigned g[3]);
  // Kernels whose every launch is dead: they are not launched (no other instantiation's shape either).
  bool onlyDead(const clang::FunctionDecl* k) const;
  // An instantiation nobody launches while others of its template are launched with other
  // non-type template arguments (`k<T, 32, 8>` only instantiated explicitly, `k<T, 64, 4>` launched
  // with dim3(64, 4)): their shapes are not its shape. Instantiations that differ only in types
  // share the launched ones' shapes (a type the build leaves out, `__nv_bfloat16` without its macro).
  bool otherInstantiationsOnly(const clang::FunctionDecl* k) const;
  bool notLaunched(const clang::FunctionDecl* k) const { return onlyDead(k) || otherInstantiationsOnly(k); }
  // The launched instantiations of each kernel template (by its templated declaration).
  std::map<const clang::FunctionDecl*, std::vector<const clang::FunctionDecl*>> launchedSpecs_;
  std::set<const clang::FunctionDecl*> deadLaunched_, liveLaunched_;
  std::map<const clang::FunctionDecl*, const clang::Expr*> deadAt_;  // the first dead launch of each
  // Allocation sizes and prefix sums of flags of the buffers each launch passes (launch_buffers.cpp).
  void readBufferFacts(clang::ASTContext& ctx, const launch_detail::HostCalls& calls);

  std::map<const clang::FunctionDecl*, std::vector<uint64_t>> paramBytes_;  // per parameter; 0 = not known
  std::map<const clang::FunctionDecl*, std::vector<uint8_t>> prefixOfFlags_;
  std::map<const clang::FunctionDecl*, std::vector<std::optional<int64_t>>> argConsts_;
  std::map<const clang::FunctionDecl*, std::vector<uint8_t>> viewStrides_;
  // Every live launch of a kernel (by its canonical declaration), for the program weights
  // (launch_weights.cpp): the launch, the calls of the launch wrappers it was followed through
  // (innermost first), the grid's blocks (0: not a constant) and the block's threads.
  struct LaunchRun {
    const clang::Expr* call = nullptr;
    std::vector<const clang::Expr*> via;
    unsigned blocks = 0, threads = 0;
  };
  std::map<const clang::FunctionDecl*, std::vector<LaunchRun>> runs_;
  std::map<const clang::FunctionDecl*, ProgramShare> shares_;
  void weighKernels(clang::ASTContext& ctx, HostValues& hv);
  void recordArguments(const clang::FunctionDecl* k, std::vector<std::optional<int64_t>> values);
  std::map<const clang::FunctionDecl*, Shape> shapes_;
  std::map<const clang::FunctionDecl*, std::string> unreadable_;
  std::map<const clang::FunctionDecl*, std::array<unsigned, 3>> partial_;
  std::map<const clang::FunctionDecl*, std::vector<Shape>> allShapes_;
  std::map<std::string, std::string> programFacts_;
};

// Reads a block-shape expression: an integer, a dim3(...) temporary or a dim3 variable.
// With `partial`, an axis whose value is not known is 0 and the others are still read.
bool readBlockShape(const clang::Expr* e, clang::ASTContext& ctx, unsigned dims[3], bool partial = false);

}  // namespace gpuopt
