// missing-syncthreads (the lectures' shift example), unsafe-warp-reduce (the unrolled last warp)
// and barrier-divergence (explained, not timed).
#include <cstdlib>
#include <numeric>

#include "kernels/harness.cuh"
#include "kernels/reductions.cuh"

namespace gpuopt::demos {

constexpr int kShiftBlock = 1024;

// Shift right by one inside the block: out[i] = in[i - 1] (out[0] = in[0]).
__global__ void shiftNoBarrier(const int* in, int* out) {
  __shared__ int a[kShiftBlock];
  int i = threadIdx.x, g = blockIdx.x * blockDim.x + i;
  a[i] = in[g];
  if (i > 0) a[i] = a[i - 1];  // RAW and WAR races
  out[g] = a[i];
}

__global__ void shiftOneBarrier(const int* in, int* out) {
  __shared__ int a[kShiftBlock];
  int i = threadIdx.x, g = blockIdx.x * blockDim.x + i;
  a[i] = in[g];
  __syncthreads();
  if (i > 0) a[i] = a[i - 1];  // still a write-after-read race
  out[g] = a[i];
}

__global__ void shiftFixed(const int* in, int* out) {
  __shared__ int a[kShiftBlock];
  int i = threadIdx.x, g = blockIdx.x * blockDim.x + i;
  a[i] = in[g];
  __syncthreads();
  int t = i > 0 ? a[i - 1] : a[i];
  __syncthreads();
  a[i] = t;
  out[g] = a[i];
}

template <int MODE>  // 0 plain pointer, 1 volatile, 2 __syncwarp, 3 __shfl_down_sync
__global__ void lastWarp(const int* in, int* out) {
  __shared__ int s[256];
  unsigned tid = threadIdx.x;
  s[tid] = in[blockIdx.x * 512 + tid] + in[blockIdx.x * 512 + tid + 256];
  __syncthreads();
  for (unsigned st = 128; st > 32; st >>= 1) {
    if (tid < st) s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid < 32) {
    if (MODE == 0) {
      int* p = s;
      p[tid] += p[tid + 32]; p[tid] += p[tid + 16]; p[tid] += p[tid + 8];
      p[tid] += p[tid + 4]; p[tid] += p[tid + 2]; p[tid] += p[tid + 1];
    } else if (MODE == 1) {
      volatile int* p = s;
      p[tid] += p[tid + 32]; p[tid] += p[tid + 16]; p[tid] += p[tid + 8];
      p[tid] += p[tid + 4]; p[tid] += p[tid + 2]; p[tid] += p[tid + 1];
    } else if (MODE == 2) {
      warpReduceSafe(s, tid);
    } else {
      int v = s[tid] + s[tid + 32];
      for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
      if (tid == 0) s[0] = v;
    }
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

std::vector<Report> demoMissingSync() {
  Report rep;
  rep.demo = "missing-syncthreads";
  rep.title = "the lectures' shift kernel: no barrier, one barrier, fixed (correctness, not timing)";
  const unsigned blocks = 8192;
  const size_t n = size_t(blocks) * kShiftBlock;
  const int runs = 20;
  rep.size = std::to_string(blocks) + " blocks x 1024 threads, " + std::to_string(runs) + " runs each";
  rep.finding = "missing-syncthreads: \"read-after-write race on shared memory: thread 2 reads array[1], written by thread 1\"";
  auto h = randomInts(n, 9, 1, 1 << 30);
  DeviceBuffer<int> in(n), out(n);
  in.upload(h);
  for (int v = 0; v < 3; ++v) {
    const char* name = v == 0 ? "no barrier" : v == 1 ? "one barrier (WAR race left)" : "fixed (register + 2 barriers)";
    progress("missing-syncthreads", name);
    size_t wrongElems = 0, wrongBlocks = 0, badRuns = 0;
    for (int r = 0; r < runs; ++r) {
      out.poison();
      if (v == 0) shiftNoBarrier<<<blocks, kShiftBlock>>>(in.p, out.p);
      else if (v == 1) shiftOneBarrier<<<blocks, kShiftBlock>>>(in.p, out.p);
      else shiftFixed<<<blocks, kShiftBlock>>>(in.p, out.p);
      GPUOPT_LAUNCH_CHECK();
      auto o = out.download();
      size_t we = 0, wb = 0;
      for (unsigned b = 0; b < blocks; ++b) {
        bool bad = false;
        for (unsigned i = 0; i < kShiftBlock; ++i) {
          size_t g = size_t(b) * kShiftBlock + i;
          int ref = i > 0 ? h[g - 1] : h[g];
          if (o[g] != ref) ++we, bad = true;
        }
        wb += bad;
      }
      wrongElems += we;
      wrongBlocks += wb;
      badRuns += we > 0;
    }
    Row row;
    row.variant = name;
    row.timed = false;
    row.correct = wrongElems == 0;
    row.isFixed = v == 2;
    row.note = "wrong in " + std::to_string(badRuns) + " of " + std::to_string(runs) + " runs; " +
               std::to_string(wrongElems) + " wrong elements, " + std::to_string(wrongBlocks) + " wrong blocks in total";
    rep.rows.push_back(row);
  }
  rep.remarks.push_back("a race that produced no wrong element here is still a race: the result depends on warp "
                        "scheduling, which changes with the GPU, the block size and the other work on the card");
  return {rep};
}

std::vector<Report> demoWarpReduce() {
  Report rep;
  rep.demo = "unsafe-warp-reduce";
  rep.title = "reduction with the last warp unrolled: plain pointer, volatile, __syncwarp, __shfl_down_sync";
  const unsigned blocks = 1u << 15;
  const size_t n = size_t(blocks) * 512;
  rep.size = std::to_string(n) + " ints, block 256 (2 elements per thread), 20 timed runs";
  rep.finding = "unsafe-warp-reduce: \"lanes read each other's results with no __syncwarp() and no volatile\"";
  auto h = randomInts(n, 21);
  std::vector<long long> ref(blocks, 0);
  for (size_t i = 0; i < n; ++i) ref[i / 512] += h[i];
  DeviceBuffer<int> in(n), out(blocks);
  in.upload(h);
  const char* names[] = {"plain int* (no volatile, no sync)", "volatile int* (lecture)", "__syncwarp between steps",
                         "__shfl_down_sync"};
  for (int v = 0; v < 4; ++v) {
    progress("unsafe-warp-reduce", names[v]);
    auto launch = [&] {
      switch (v) {
        case 0: lastWarp<0><<<blocks, 256>>>(in.p, out.p); break;
        case 1: lastWarp<1><<<blocks, 256>>>(in.p, out.p); break;
        case 2: lastWarp<2><<<blocks, 256>>>(in.p, out.p); break;
        default: lastWarp<3><<<blocks, 256>>>(in.p, out.p); break;
      }
    };
    size_t wrongBlocks = 0, badRuns = 0;
    Row row;
    row.variant = names[v];
    for (int r = 0; r < 20; ++r) {
      out.poison();
      launch();
      GPUOPT_LAUNCH_CHECK();
      auto o = out.download();
      size_t wb = 0;
      for (unsigned b = 0; b < blocks; ++b) wb += o[b] != ref[b];
      wrongBlocks += wb;
      badRuns += wb > 0;
    }
    row.correct = wrongBlocks == 0;
    row.t = timeIt(launch, [&] { out.poison(); });
    row.gbs = n * sizeof(int) / (row.t.medianMs * 1e-3) / 1e9;
    row.note = "wrong in " + std::to_string(badRuns) + " of 20 runs (" + std::to_string(wrongBlocks) + " wrong block sums)";
    row.isFixed = v == 3;
    rep.rows.push_back(row);
  }
  rep.remarks.push_back("volatile-only code that gave right sums here still relies on lockstep execution that the CUDA "
                        "programming model no longer promises (independent thread scheduling since Volta)");
  return {rep};
}

std::vector<Report> demoBarrierDivergence() {
  Report rep;
  rep.demo = "barrier-divergence";
  rep.title = "no timing demo: a barrier reached by only part of a block is undefined behaviour";
  rep.size = "-";
  rep.remarks.push_back("__syncthreads() inside a branch that only some threads of a block take has no defined "
                        "result: the block may hang, continue early, or appear to work; any timing would measure luck");
  rep.remarks.push_back("to see it on your own kernel: compute-sanitizer --tool synccheck ./your_program");
  const char* path = std::getenv("PATH");
  bool found = false;
  if (path) {
    std::string p(path);
    size_t s = 0;
    while (s <= p.size()) {
      size_t e = p.find(':', s);
      std::string dir = p.substr(s, e == std::string::npos ? std::string::npos : e - s);
      std::string f = dir + "/compute-sanitizer";
      if (FILE* fp = fopen(f.c_str(), "r")) { fclose(fp); found = true; break; }
      if (e == std::string::npos) break;
      s = e + 1;
    }
  }
  rep.remarks.push_back(found ? "compute-sanitizer is on this machine's PATH"
                              : "compute-sanitizer is not on this machine's PATH (it ships with the CUDA toolkit)");
  return {rep};
}

}  // namespace gpuopt::demos
