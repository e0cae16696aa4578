// The kernel model on its own: expression in, per-lane values out.
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Frontend/ASTUnit.h>
#include <clang/Tooling/Tooling.h>
#include <gtest/gtest.h>
#include <llvm/Support/thread.h>

#include "analyzer/frontend/crash_guard.h"
#include "analyzer/frontend/frontend.h"
#include "analyzer/model/kernel_model.h"
#include "analyzer/model/ast_util.h"
#include "analyzer/model/shapes.h"

#include <fmt/format.h>

using namespace gpuopt;

namespace {

struct Parsed {
  std::unique_ptr<clang::ASTUnit> ast;
  std::unique_ptr<KernelModel> model;
};

Parsed modelOnThisThread(const std::string& code, ModelOptions opts);

// Parses `code` with the bundled CUDA header (no toolkit needed) and models kernel `k`, on a
// thread with the stack the tool gives every parse (guardedStackBytes(), crash_guard.h), as
// gpuopt-lint does: deep expressions recurse deeper than a main thread's 8 MiB allows in the
// Sanitize build, whose frames are larger.
Parsed model(const std::string& code, ModelOptions opts = {}) {
  Parsed p;
  llvm::thread t(std::optional<unsigned>(guardedStackBytes()), [&] { p = modelOnThisThread(code, opts); });
  t.join();
  return p;
}

Parsed modelOnThisThread(const std::string& code, ModelOptions opts) {
  FrontendOptions fo;
  std::string err;
  std::string res = findResourceDir(fo, err);
  EXPECT_FALSE(res.empty()) << err;
  auto pc = buildParseCommand("input.cu", fo, res, "", {});
  std::vector<std::string> args(pc.args.begin() + 1, pc.args.end() - 1);
  clang::tooling::FileContentMappings files;
  for (const auto& [path, text] : bundledCudaHeaders())
    files.emplace_back(std::string(kBundledIncludeDir) + "/" + std::string(path), std::string(text));
  Parsed p;
  p.ast = clang::tooling::buildASTFromCodeWithArgs(code, args, "input.cu", "gpuopt-test",
                                                    std::make_shared<clang::PCHContainerOperations>(),
                                                    clang::tooling::getClangStripDependencyFileAdjuster(), files);
  EXPECT_TRUE(p.ast);
  EXPECT_FALSE(p.ast->getDiagnostics().hasErrorOccurred()) << code;
  struct Find : clang::RecursiveASTVisitor<Find> {
    const clang::FunctionDecl* k = nullptr;
    bool shouldVisitTemplateInstantiations() const { return true; }
    bool VisitFunctionDecl(clang::FunctionDecl* f) {
      if (f->getIdentifier() && f->getName() == "k" && f->hasAttr<clang::CUDAGlobalAttr>() && f->doesThisDeclarationHaveABody() &&
          !f->isDependentContext())
        k = f;
      return true;
    }
  } find;
  find.TraverseDecl(p.ast->getASTContext().getTranslationUnitDecl());
  EXPECT_NE(find.k, nullptr);
  if (!find.k) return p;
  LaunchIndex launches(p.ast->getASTContext());
  p.model = KernelModel::build(find.k, p.ast->getASTContext(), opts, launches);
  return p;
}

// The value each of the first 32 threads stores in `out[...] = EXPR` (the first write access).
std::vector<int64_t> lanes(const std::string& prelude, const std::string& expr, ModelOptions opts = {}) {
  Parsed p = model(prelude + "\n__global__ void k(int* out, int n) {\n  out[threadIdx.x + blockDim.x * threadIdx.y] = " +
                   expr + ";\n}\n", opts);
  if (!p.model) return {};
  for (const auto& a : p.model->accesses())
    if (a.isWrite) {
      EXPECT_TRUE(a.storedKnown) << expr;
      return std::vector<int64_t>(a.stored.begin(), a.stored.begin() + 32);
    }
  ADD_FAILURE() << "no write recorded";
  return {};
}

std::vector<int64_t> iota32(std::function<int64_t(int)> f) {
  std::vector<int64_t> v;
  for (int t = 0; t < 32; ++t) v.push_back(f(t));
  return v;
}

}  // namespace

TEST(KernelModel, ThreadIndexArithmetic) {
  EXPECT_EQ(lanes("", "threadIdx.x % 4"), iota32([](int t) { return t % 4; }));
  EXPECT_EQ(lanes("", "(threadIdx.x & 1) == 0"), iota32([](int t) { return (t & 1) == 0; }));
  EXPECT_EQ(lanes("", "threadIdx.x / 8 * 3 + (threadIdx.x << 2) - (threadIdx.x >> 1) ^ 5"),
            iota32([](int t) { return (t / 8 * 3 + (t << 2) - (t >> 1)) ^ 5; }));
  EXPECT_EQ(lanes("", "threadIdx.x > 10 ? threadIdx.x : 100 - threadIdx.x"),
            iota32([](int t) { return t > 10 ? t : 100 - t; }));
  // The kernel reads threadIdx.y and no launch gives its shape: judged first as a 32x8 block (a
  // 256x1 block would have been an invention, issue 26).
  EXPECT_EQ(lanes("", "blockDim.x + warpSize"), iota32([](int) { return 32 + 32; }));
  // Unsigned arithmetic wraps at 32 bits.
  EXPECT_EQ(lanes("", "(int)(threadIdx.x - 1u == 4294967295u)"), iota32([](int t) { return t == 0; }));
}

TEST(KernelModel, ConstantsDefinesConstexprEnumsAndTemplates) {
  EXPECT_EQ(lanes("#define W 8\nconstexpr int K = 3;\nenum { E = 2 };", "threadIdx.x * W + K - E"),
            iota32([](int t) { return t * 8 + 1; }));
  Parsed p = model("template <int N> __global__ void k(int* out) { out[threadIdx.x] = threadIdx.x * N; }\n"
                   "void launch(int* o) { k<5><<<1, 64>>>(o); }\n");
  ASSERT_TRUE(p.model);
  EXPECT_EQ(p.model->blockX(), 64u);
  ASSERT_FALSE(p.model->accesses().empty());
  EXPECT_EQ(p.model->accesses()[0].stored[7], 35);
}

TEST(KernelModel, TwoDimensionalBlockPutsTwoRowsInAWarp) {
  ModelOptions o;
  o.blockX = 16, o.blockY = 16, o.blockDimGiven = true;
  EXPECT_EQ(lanes("", "threadIdx.y", o), iota32([](int t) { return t / 16; }));
  EXPECT_EQ(lanes("", "threadIdx.x", o), iota32([](int t) { return t % 16; }));
}

TEST(KernelModel, LocalsLoopsAndDeviceFunctions) {
  Parsed p = model(
      "__device__ int twice(int x) { return 2 * x; }\n"
      "__global__ void k(int* out) {\n"
      "  int s = 0;\n"
      "  for (int j = 0; j < 4; ++j) s += threadIdx.x;\n"
      "  int v = threadIdx.x; v <<= 1; v -= 1;\n"
      "  out[threadIdx.x] = twice(s) + v;\n"
      "}\n");
  ASSERT_TRUE(p.model);
  const Access& a = p.model->accesses().back();
  ASSERT_TRUE(a.storedKnown);
  for (int t = 0; t < 32; ++t) EXPECT_EQ(a.stored[t], 2 * 4 * t + 2 * t - 1) << t;
}

TEST(KernelModel, CooperativeGroupsRanks) {
  Parsed p = model(
      "namespace cg = cooperative_groups;\n"
      "__global__ void k(int* out) {\n"
      "  cg::thread_block b = cg::this_thread_block();\n"
      "  cg::thread_block_tile<32> w = cg::tiled_partition<32>(b);\n"
      "  out[b.thread_rank()] = w.thread_rank() * 100 + w.meta_group_rank();\n"
      "  b.sync();\n"
      "  w.sync();\n"
      "}\n"
      "void go(int* o) { k<<<1, 64>>>(o); }\n");
  ASSERT_TRUE(p.model);
  const Access& a = p.model->accesses()[0];
  ASSERT_TRUE(a.known && a.storedKnown);
  EXPECT_EQ(a.addr[33], 33 * 4);
  EXPECT_EQ(a.stored[33], 1 * 100 + 1);
  ASSERT_EQ(p.model->barriers().size(), 2u);
  EXPECT_TRUE(p.model->barriers()[0].blockLevel);
  EXPECT_FALSE(p.model->barriers()[1].blockLevel);
}

TEST(KernelModel, ParametersAreUniformSymbolsAndLoadsAreData) {
  Parsed p = model(
      "__global__ void k(int* out, const int* in, int n) {\n"
      "  out[threadIdx.x] = n;\n"
      "  out[in[threadIdx.x]] = 1;\n"
      "  int u = in[0];\n"
      "  out[threadIdx.x * n] = u;\n"
      "}\n");
  ASSERT_TRUE(p.model);
  const auto& acc = p.model->accesses();
  ASSERT_GE(acc.size(), 5u);
  ASSERT_TRUE(acc[0].storedKnown) << "a parameter has a representative value";
  EXPECT_EQ(acc[0].stored[0], acc[0].stored[31]) << "and it is the same for every thread";
  EXPECT_TRUE(acc[2].data) << "index loaded per thread";
  EXPECT_FALSE(acc[2].known);
  EXPECT_EQ(acc.back().strideSym, "n");
}

TEST(KernelModel, ControlFlowMasksBarrierIntervalsAndBlockShapeSources) {
  Parsed p = model(
      "__global__ void __launch_bounds__(128) k(int* out) {\n"
      "  __shared__ int s[128];\n"
      "  if (threadIdx.x >= 10) return;\n"
      "  s[threadIdx.x] = 1;\n"
      "  __syncthreads();\n"
      "  out[threadIdx.x] = s[threadIdx.x];\n"
      "}\n");
  ASSERT_TRUE(p.model);
  EXPECT_EQ(p.model->blockX(), 128u);
  // __launch_bounds__ bounds the thread count; it is not a launch (issue 26).
  EXPECT_EQ(p.model->blockSource(),
            "assumed: no launch of 'k' in this file; __launch_bounds__(128) bounds its thread count, not its shape");
  const auto& acc = p.model->accesses();
  ASSERT_EQ(acc.size(), 3u);
  unsigned active = 0;
  for (unsigned t = 0; t < 128; ++t) active += acc[0].mask[t];
  EXPECT_EQ(active, 10u);
  EXPECT_EQ(acc[0].epoch, 0u);
  EXPECT_EQ(acc[1].epoch, 1u);
  EXPECT_EQ(acc[0].space, MemSpace::Shared);
  EXPECT_EQ(acc[2].space, MemSpace::Global);

  Parsed q = model("__global__ void k(int* o) { o[threadIdx.x] = 0; }\nvoid go(int* o) { dim3 b(32, 4); k<<<8, b>>>(o); }\n");
  ASSERT_TRUE(q.model);
  EXPECT_EQ(q.model->blockX(), 32u);
  EXPECT_EQ(q.model->blockY(), 4u);
  EXPECT_FALSE(q.model->blockAssumed());
  Parsed r = model("__global__ void k(int* o) { o[threadIdx.x] = 0; }\n");
  ASSERT_TRUE(r.model);
  EXPECT_TRUE(r.model->blockAssumed());
  EXPECT_EQ(r.model->threads(), 256u);
}

TEST(KernelModel, EveryBarrierSpelling) {
  Parsed p = model(
      "namespace cg = cooperative_groups;\n"
      "__global__ void k(int* out) {\n"
      "  cg::thread_block b = cg::this_thread_block();\n"
      "  cg::thread_block_tile<32> w = cg::tiled_partition<32>(b);\n"
      "  __syncthreads();\n"
      "  int c = __syncthreads_count(threadIdx.x & 1);\n"
      "  __syncthreads_and(1); __syncthreads_or(0);\n"
      "  __barrier_sync(0);\n"
      "  cg::sync(b); b.sync(); cg::this_thread_block().sync();\n"
      "  __syncwarp(); w.sync(); cg::sync(w);\n"
      "  out[threadIdx.x] = __shfl_down_sync(0xffffffffu, c, 1);\n"
      "}\n");
  ASSERT_TRUE(p.model);
  std::vector<bool> levels;
  for (const auto& b : p.model->barriers()) levels.push_back(b.blockLevel);
  std::vector<bool> want = {true, true, true, true, true, true, true, true, false, false, false, false};
  EXPECT_EQ(levels, want);
}

TEST(KernelModel, FloorDivisionForWrappedIndices) {
  EXPECT_EQ(floorDiv(-5, 4), -2);
  EXPECT_EQ(floorDiv(-8, 4), -2);
  EXPECT_EQ(floorDiv(7, 4), 1);
  EXPECT_EQ(floorDiv(-1, 32), -1);
}

TEST(KernelModel, GroupSizeFollowsATilePassedAsThreadGroup) {
  Parsed p = model(
      "namespace cg = cooperative_groups;\n"
      "__device__ void f(cg::thread_group g, int* out) { out[g.thread_rank()] = g.size(); }\n"
      "__global__ void k(int* out) {\n"
      "  cg::thread_block b = cg::this_thread_block();\n"
      "  cg::thread_block_tile<16> t = cg::tiled_partition<16>(b);\n"
      "  f(t, out);\n"
      "}\n"
      "void go(int* o) { k<<<1, 64>>>(o); }\n");
  ASSERT_TRUE(p.model);
  const Access& a = p.model->accesses()[0];
  ASSERT_TRUE(a.known && a.storedKnown);
  EXPECT_EQ(a.addr[17], 1 * 4) << "rank in the 16-thread tile";
  EXPECT_EQ(a.stored[17], 16) << "size of the tile";
}

TEST(KernelModel, AssumedBlockShrinksToFitFixedSizeArrays) {
  Parsed p = model(
      "__global__ void k(const int* in, int* out) {\n"
      "  __shared__ int ref[16][16];\n"
      "  for (int ty = 0; ty < 16; ty++) ref[ty][threadIdx.x] = in[ty];\n"
      "}\n");
  ASSERT_TRUE(p.model);
  EXPECT_EQ(p.model->threads(), 16u);
  EXPECT_NE(p.model->blockSource().find("inferred"), std::string::npos);
}

TEST(KernelModel, RacesAreFoundBetweenConcreteThreads) {
  Parsed p = model(
      "__global__ void k(int* out) {\n"
      "  __shared__ int a[128];\n"
      "  int i = threadIdx.x;\n"
      "  a[i] = i;\n"
      "  if (i > 1 && i < 100) a[i] = a[i - 1];\n"
      "  out[i] = a[i];\n"
      "}\n"
      "void go(int* o) { k<<<1, 128>>>(o); }\n");
  ASSERT_TRUE(p.model);
  const auto& races = p.model->sharedRaces();
  ASSERT_FALSE(races.empty());
  const auto& r = races[0];
  EXPECT_TRUE(r.first->isWrite);
  EXPECT_TRUE(r.second->isRead);
  EXPECT_EQ(r.t1 + 1, r.t2) << "the reader reads its left neighbour's slot";
}

TEST(KernelModel, DoWhileZeroIsNoLoopAndBreakLeavesIt) {
  Parsed p = model(
      "#define CHECKED(i) do { if (threadIdx.x % 2) break; out[i] = 1; } while (0)\n"
      "__global__ void k(int* out) {\n"
      "  CHECKED(threadIdx.x);\n"
      "  out[threadIdx.x + 64] = 2;\n"
      "}\n");
  ASSERT_TRUE(p.model);
  for (const auto& b : p.model->branches()) {
    EXPECT_FALSE(b.isLoop) << "a body that cannot run twice is not a loop";
    EXPECT_FALSE(b.inLoop);
    EXPECT_EQ(b.context, "");
  }
  const auto& acc = p.model->accesses();
  ASSERT_EQ(acc.size(), 2u);
  EXPECT_EQ(acc[0].mask[0], 1);
  EXPECT_EQ(acc[0].mask[1], 0) << "odd threads left with break";
  EXPECT_EQ(acc[1].mask[1], 1) << "and continue after the macro";
  EXPECT_EQ(acc[0].context, "");
}

TEST(KernelModel, LaunchesInLambdasAndThroughCudaLaunchKernelGiveTheBlockShape) {
  Parsed p = model(
      "__global__ void k(int* out) { out[threadIdx.x] = 1; }\n"
      "void host(int* d) {\n"
      "  int threads = 8;\n"
      "  auto run = [&] { k<<<1, threads>>>(d); };\n"
      "  run();\n"
      "}\n");
  ASSERT_TRUE(p.model);
  EXPECT_EQ(p.model->blockX(), 8u);
  EXPECT_EQ(p.model->blockSource(), "launch at line 4");
  Parsed q = model(
      "__global__ void k(int* out) { out[threadIdx.x] = 1; }\n"
      "void host(int* d) {\n"
      "  void* args[] = {&d};\n"
      "  cudaLaunchKernel((const void*)k, dim3(4), dim3(16, 2), args, 0, 0);\n"
      "}\n");
  ASSERT_TRUE(q.model);
  EXPECT_EQ(q.model->blockX(), 16u);
  EXPECT_EQ(q.model->blockY(), 2u);
  Parsed r = model(
      "__global__ void k(int* out) { out[threadIdx.x] = 1; }\n"
      "void host(int* d, int n) { k<<<1, n>>>(d); }\n");
  ASSERT_TRUE(r.model);
  EXPECT_TRUE(r.model->blockAssumed());
  EXPECT_EQ(r.model->blockDescription(),
            "a 256-thread block (assumed: the launch at line 2 has a block size known only at run time (it gives y = 1, "
            "z = 1); pass --block-dim k=X,Y,Z)");
}

TEST(KernelModel, LaunchShapeFromCudaLaunchKernelEx) {
  // Member by member (the usual way), through dim3's assignment.
  Parsed p = model(
      "__global__ void k(int* out) { out[threadIdx.x] = 1; }\n"
      "void host(int* d) {\n"
      "  cudaLaunchConfig_t cfg = {};\n"
      "  cfg.gridDim = dim3(4);\n"
      "  cfg.blockDim = dim3(32, 4);\n"
      "  cudaLaunchKernelEx(&cfg, k, d);\n"
      "}\n");
  ASSERT_TRUE(p.model);
  EXPECT_FALSE(p.model->blockAssumed());
  EXPECT_EQ(p.model->blockX(), 32u);
  EXPECT_EQ(p.model->blockY(), 4u);
  EXPECT_EQ(p.model->blockSource(), "launch at line 6");
  // In the initialiser, with the C API.
  Parsed q = model(
      "__global__ void k(int* out) { out[threadIdx.x] = 1; }\n"
      "void host(int* d) {\n"
      "  cudaLaunchConfig_t cfg = {dim3(8), dim3(64)};\n"
      "  void* args[] = {&d};\n"
      "  cudaLaunchKernelExC(&cfg, (const void*)k, args);\n"
      "}\n");
  ASSERT_TRUE(q.model);
  EXPECT_EQ(q.model->blockX(), 64u);
  EXPECT_EQ(q.model->blockY(), 1u);
  // A block size known only at run time is named.
  Parsed r = model(
      "__global__ void k(int* out) { out[threadIdx.x] = 1; }\n"
      "void host(int* d, unsigned n) {\n"
      "  cudaLaunchConfig_t cfg = {};\n"
      "  cfg.blockDim = dim3(n);\n"
      "  cudaLaunchKernelEx(&cfg, k, d);\n"
      "}\n");
  ASSERT_TRUE(r.model);
  EXPECT_TRUE(r.model->blockAssumed());
  EXPECT_NE(r.model->blockDescription().find("launch at line 5 has a block size known only at run time"), std::string::npos);
}

TEST(KernelModel, Dim3MembersSetOneByOne) {
  Parsed p = model(
      "__global__ void k(int* out) { out[threadIdx.x] = 1; }\n"
      "void host(int* d) {\n"
      "  dim3 block;\n"
      "  block.x = 16;\n"
      "  block.y = 8;\n"
      "  k<<<1, block>>>(d);\n"
      "}\n");
  ASSERT_TRUE(p.model);
  EXPECT_EQ(p.model->blockX(), 16u);
  EXPECT_EQ(p.model->blockY(), 8u);
  EXPECT_EQ(p.model->blockZ(), 1u);
}

TEST(KernelModel, AReassignedBlockSizeVariableGivesTheValueThatReachesTheLaunch) {
  // HeCBench segsort: `threads = 512; k1<<<g, threads>>>(); threads = 128; k2<<<g, threads>>>();`
  Parsed p = model(
      "__global__ void k(int* out) { out[threadIdx.x] = 1; }\n"
      "void host(int* d) {\n"
      "  int threads = 512;\n"
      "  threads = 128;\n"
      "  k<<<1, threads>>>(d);\n"
      "}\n");
  ASSERT_TRUE(p.model);
  EXPECT_EQ(p.model->blockX(), 128u) << "the assignment before the launch, not the initialiser";
  EXPECT_FALSE(p.model->blockAssumed());
  // Assigned in a branch (HeCBench tpacf's dim3): not one value at the launch.
  Parsed q = model(
      "__global__ void k(int* out) { out[threadIdx.x] = 1; }\n"
      "void host(int* d, int n) {\n"
      "  dim3 threads(512);\n"
      "  if (n > 64) threads = dim3(128);\n"
      "  k<<<1, threads>>>(d);\n"
      "}\n");
  ASSERT_TRUE(q.model);
  EXPECT_TRUE(q.model->blockAssumed());
  EXPECT_NE(q.model->blockDescription().find("known only at run time"), std::string::npos) << q.model->blockDescription();
  // Assigned in a loop around the launch: differs by iteration.
  Parsed r = model(
      "__global__ void k(int* out) { out[threadIdx.x] = 1; }\n"
      "void host(int* d) {\n"
      "  int threads = 512;\n"
      "  for (int i = 0; i < 3; ++i) { k<<<1, threads>>>(d); threads = 64; }\n"
      "}\n");
  ASSERT_TRUE(r.model);
  EXPECT_TRUE(r.model->blockAssumed());
}

TEST(KernelModel, BlockStepsOnlyWhenAskedForAndForAKnownShape) {
  const std::string launched =
      "__global__ void k(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1; }\n"
      "void go(int* o) { k<<<64, 128>>>(o); }\n";
  auto steps = [](const Parsed& p) -> std::vector<int64_t> {
    for (const auto& a : p.model->accesses())
      if (a.isWrite && a.blockLinear) return {a.stepX[0], a.stepX[5]};
    return {};
  };
  Parsed on = model(launched);
  ASSERT_TRUE(on.model);
  EXPECT_EQ(steps(on), (std::vector<int64_t>{128 * 4, 128 * 4})) << "each block moves the address by 128 ints";
  ModelOptions off;
  off.blockSteps = false;  // no enabled rule needs them
  Parsed no = model(launched, off);
  ASSERT_TRUE(no.model);
  EXPECT_TRUE(steps(no).empty()) << "a blockIdx-dependent address has no steps when the model does not carry them";
  // An assumed block shape: no race between blocks is judged, so no steps either.
  Parsed assumed = model("__global__ void k(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1; }\n");
  ASSERT_TRUE(assumed.model);
  EXPECT_TRUE(assumed.model->blockAssumed());
  EXPECT_TRUE(steps(assumed).empty());
}

TEST(KernelModel, BufferSizesFromTheHostAllocationsOfEveryLaunch) {
  Parsed p = model(
      "struct Grid { const int cells = 100 + 1; };\n"
      "__global__ void k(const double* table, const double* big, double* out) {\n"
      "  out[threadIdx.x] = table[threadIdx.x % 7] + big[threadIdx.x];\n"
      "}\n"
      "void push(const double* t, const double* b, double* o) { k<<<1, 64>>>(t, b, o); }\n"
      "void run(int n) {\n"
      "  Grid g;\n"
      "  double *t, *b, *o;\n"
      "  cudaMalloc((void**)&t, g.cells * sizeof(double));\n"
      "  cudaMalloc((void**)&b, n * sizeof(double));\n"
      "  cudaMalloc(&o, 64 * sizeof(double));\n"
      "  push(t, b, o);\n"
      "}\n");
  ASSERT_TRUE(p.model);
  const auto* k = p.model->kernel();
  EXPECT_EQ(p.model->allocatedBytes(k->getParamDecl(0)), 808u) << "101 doubles, through push()'s parameter";
  EXPECT_EQ(p.model->allocatedBytes(k->getParamDecl(1)), 0u) << "a run-time size";
  EXPECT_EQ(p.model->allocatedBytes(k->getParamDecl(2)), 512u);
}

TEST(KernelModel, BlockBlindKernelsComputeTheSameInEveryBlock) {
  auto blind = [](const std::string& code) {
    Parsed p = model(code);
    return p.model ? blockBlind(p.model->kernel()) : false;
  };
  // Called bodies are followed; unevaluated operands (decltype, sizeof) run nothing.
  EXPECT_TRUE(blind("__device__ int twice(int v) { return 2 * v; }\n"
                    "__global__ void k(const int* in, int* out) {\n"
                    "  decltype(twice(blockIdx.x)) v = twice(in[threadIdx.x]) + sizeof(blockIdx.x);\n"
                    "  out[threadIdx.x] = v;\n}\n"));
  EXPECT_FALSE(blind("__device__ int tile() { return blockIdx.x * 256; }\n"
                     "__global__ void k(const int* in, int* out) { out[threadIdx.x] = in[tile() + threadIdx.x]; }\n"));
  EXPECT_FALSE(blind("__device__ int elsewhere(int);\n"
                     "__global__ void k(const int* in, int* out) { out[threadIdx.x] = elsewhere(in[threadIdx.x]); }\n"));
  EXPECT_FALSE(blind("__global__ void k(int* out) {\n  unsigned b;\n  asm(\"mov.u32 %0, %%ctaid.x;\" : \"=r\"(b));\n"
                     "  out[threadIdx.x] = b;\n}\n"));
}

TEST(KernelModel, SelectionByKeyMarksTheStoresItGuards) {
  auto selected = [](const std::string& cond) {
    Parsed p = model("__global__ void k(const int* idx, const int* pivot, float* out, int n) {\n"
                     "  __shared__ float s;\n  int key = idx[threadIdx.x];\n  int mine = key;\n"
                     "  __shared__ int best;\n  if (threadIdx.x == 0) best = n;\n  __syncthreads();\n"
                     "  if (" + cond + ") s = 1.0f;\n  __syncthreads();\n  out[threadIdx.x] = s;\n}\n");
    if (!p.model) return false;
    for (const auto& a : p.model->accesses())
      if (a.isWrite && a.space == MemSpace::Shared && a.elemSize == 4 && a.baseName == "s") return !a.selectGuards.empty();
    ADD_FAILURE() << "no store to s";
    return false;
  };
  EXPECT_TRUE(selected("key == n"));               // a parameter
  EXPECT_TRUE(selected("threadIdx.x < 200 && *pivot == mine"));  // a global load, under &&
  EXPECT_FALSE(selected("key * 2 == n"));          // a computed key
  EXPECT_FALSE(selected("key == best"));           // a value the block made
  EXPECT_FALSE(selected("key != n"));              // not an equality
}

// Issue 33: Clang's constant folding is asked only of expressions of at most 256 nodes (asked of
// every operand of a 65,536-term sum it cost the square: 239 s); a larger constant expression is
// still known, its operands folded one by one and combined by the model.
TEST(KernelModel, LargeConstantExpressionsAreStillKnown) {
  std::string sum = "threadIdx.x";
  for (int i = 0; i < 2000; ++i) sum += i % 2 ? " + sizeof(int)" : " + (3 * 2 - 5)";
  EXPECT_EQ(lanes("", sum), iota32([](int t) { return t + 1000 * 4 + 1000; }));
  std::string constant = "(int)(1";
  for (int i = 0; i < 300; ++i) constant += " + 1";
  EXPECT_EQ(lanes("", constant + ") * threadIdx.x"), iota32([](int t) { return 301 * t; }));
}
