// The device-side rules of issue 14: global-memory-race (lecture 001's c[i] = c[i] + c[i-1]),
// atomic-contention, partial-warp-block, double-promotion and dynamic-local-array.
#include <cmath>
#include <numeric>

#include "kernels/harness.cuh"

namespace gpuopt::demos {

// ---- global-memory-race ----
__global__ void quizInPlace(float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n) c[i] = c[i] + c[i - 1];
}
__global__ void quizFix1(float* c, int n) {
  float temp = 0;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n) temp = c[i] + c[i - 1];
  __syncthreads();
  if (i > 0 && i < n) c[i] = temp;
  __syncthreads();
}
__global__ void quizSecondArray(const float* c, float* t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n) t[i] = c[i] + c[i - 1];
  else if (i == 0) t[0] = c[0];
}

std::vector<Report> demoGlobalRace() {
  Report rep;
  rep.demo = "global-memory-race";
  rep.title = "lecture 001's c[i] = c[i] + c[i-1]: in place, the lecture's Fix1 (register + __syncthreads), second array";
  const unsigned block = 256, blocks = 16384;
  const int n = int(block * blocks), runs = 20;
  rep.size = std::to_string(blocks) + " blocks x 256 threads, " + std::to_string(runs) + " runs each (correctness)";
  rep.finding = "global-memory-race: \"thread 0 of block b+1 reads 'c[i - 1]', the element thread 255 of block b writes\"";
  auto h = randomFloats(n, 21, 1.0f, 2.0f);
  DeviceBuffer<float> c(n), t(n);
  for (int v = 0; v < 3; ++v) {
    const char* name = v == 0 ? "in place (races)" : v == 1 ? "Fix1: register + barrier" : "second array (fixed)";
    progress(rep.demo, name);
    size_t wrong = 0, wrongAtBoundary = 0, badRuns = 0;
    for (int r = 0; r < runs; ++r) {
      c.upload(h);
      t.poison();
      if (v == 0) quizInPlace<<<blocks, block>>>(c.p, n);
      else if (v == 1) quizFix1<<<blocks, block>>>(c.p, n);
      else quizSecondArray<<<blocks, block>>>(c.p, t.p, n);
      GPUOPT_LAUNCH_CHECK();
      auto o = v == 2 ? t.download() : c.download();
      size_t w = 0;
      for (int i = 0; i < n; ++i) {
        float ref = i == 0 ? h[0] : h[i] + h[i - 1];
        if (o[i] != ref) ++w, wrongAtBoundary += (i % block) == 0;
      }
      wrong += w;
      badRuns += w > 0;
    }
    Row row;
    row.variant = name;
    row.timed = false;
    row.correct = wrong == 0;
    row.isFixed = v == 2;
    row.note = "wrong in " + std::to_string(badRuns) + " of " + std::to_string(runs) + " runs; " + std::to_string(wrong) +
               " wrong elements, " + std::to_string(wrongAtBoundary) + " of them at a block's first element";
    rep.rows.push_back(row);
  }
  rep.remarks.push_back("Fix1 orders the threads of a block only: the first thread of each block still reads an "
                        "element another block may already have overwritten; no __syncthreads() can order blocks");
  return {rep};
}

// ---- atomic-contention ----
__global__ void countEvery(int* counter) { atomicAdd(counter, 1); }
__global__ void countBlock(int* counter) {
  __shared__ int s;
  if (threadIdx.x == 0) s = 0;
  __syncthreads();
  atomicAdd(&s, 1);
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(counter, s);
}
__global__ void sumEvery(const float* a, float* sum) { atomicAdd(sum, a[blockIdx.x * blockDim.x + threadIdx.x]); }
__global__ void sumBlock(const float* a, float* sum) {
  __shared__ float w[8];
  float v = a[blockIdx.x * blockDim.x + threadIdx.x];
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int k = 0; k < 8; ++k) s += w[k];
    atomicAdd(sum, s);
  }
}
__global__ void hist4Global(const int* v, unsigned* bins) {
  atomicAdd(&bins[v[blockIdx.x * blockDim.x + threadIdx.x] & 3], 1u);
}
__global__ void hist4Shared(const int* v, unsigned* bins) {
  __shared__ unsigned local[4];
  if (threadIdx.x < 4) local[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd(&local[v[blockIdx.x * blockDim.x + threadIdx.x] & 3], 1u);
  __syncthreads();
  if (threadIdx.x < 4) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

std::vector<Report> demoAtomic() {
  std::vector<Report> out;
  const unsigned block = 256, blocks = 65536;
  const size_t n = size_t(block) * blocks;
  auto hf = randomFloats(n, 31, 0.0f, 1.0f);
  auto hi = randomInts(n, 32, 0, 1 << 20);
  DeviceBuffer<float> a(n), fsum(1);
  DeviceBuffer<int> v(n), counter(1);
  DeviceBuffer<unsigned> bins(4);
  a.upload(hf);
  v.upload(hi);
  {
    Report rep;
    rep.demo = "atomic-contention";
    rep.title = "atomicAdd(counter, 1) from every thread (nvcc aggregates per warp) vs one atomic per block";
    rep.size = "16M threads";
    rep.finding = "atomic-contention: \"every thread of the block (256 threads in 8 warps) updates one address; nvcc already aggregates this per warp\"";
    for (int k = 0; k < 2; ++k) {
      Row r;
      r.variant = k == 0 ? "every thread (warp-aggregated)" : "shared count, 1 atomic per block";
      progress(rep.demo, r.variant);
      r.t = timeIt([&] { if (k == 0) countEvery<<<blocks, block>>>(counter.p); else countBlock<<<blocks, block>>>(counter.p); },
                   [&] { GPUOPT_CHECK(cudaMemset(counter.p, 0, sizeof(int))); });
      r.correct = counter.download()[0] == int(n);
      r.isFixed = k == 1;
      rep.rows.push_back(r);
    }
    out.push_back(rep);
  }
  {
    Report rep;
    rep.demo = "atomic-contention";
    rep.title = "float sum: atomicAdd(sum, a[i]) from every thread vs warp shuffle + shared memory + 1 atomic per block";
    rep.size = "16M floats";
    rep.finding = "atomic-contention: \"all 32 active lanes of each warp and all 8 warps of the block update one address\"";
    double ref = 0;
    for (float x : hf) ref += x;
    for (int k = 0; k < 2; ++k) {
      Row r;
      r.variant = k == 0 ? "every thread" : "shuffle + block, 1 atomic per block";
      progress(rep.demo, r.variant);
      r.t = timeIt([&] { if (k == 0) sumEvery<<<blocks, block>>>(a.p, fsum.p); else sumBlock<<<blocks, block>>>(a.p, fsum.p); },
                   [&] { GPUOPT_CHECK(cudaMemset(fsum.p, 0, sizeof(float))); });
      double got = fsum.download()[0];
      r.correct = std::fabs(got - ref) <= 1e-3 * ref;
      r.gbs = n * 4.0 / (r.t.medianMs * 1e-3) / 1e9;
      r.isFixed = k == 1;
      r.note = "sum within 0.1% of the double reference";
      rep.rows.push_back(r);
    }
    out.push_back(rep);
  }
  {
    Report rep;
    rep.demo = "atomic-contention";
    rep.title = "4-bin histogram: atomicAdd(&bins[v & 3], 1) in global memory vs privatised bins in shared memory";
    rep.size = "16M values";
    rep.finding = "atomic-contention: \"the index depends on data but has at most 4 values, so 32 lanes of a warp hit at most 4 addresses\"";
    unsigned refBins[4] = {0, 0, 0, 0};
    for (int x : hi) ++refBins[x & 3];
    for (int k = 0; k < 2; ++k) {
      Row r;
      r.variant = k == 0 ? "global bins" : "shared bins per block";
      progress(rep.demo, r.variant);
      r.t = timeIt([&] { if (k == 0) hist4Global<<<blocks, block>>>(v.p, bins.p); else hist4Shared<<<blocks, block>>>(v.p, bins.p); },
                   [&] { GPUOPT_CHECK(cudaMemset(bins.p, 0, 4 * sizeof(unsigned))); });
      auto b = bins.download();
      r.correct = b[0] == refBins[0] && b[1] == refBins[1] && b[2] == refBins[2] && b[3] == refBins[3];
      r.gbs = n * 4.0 / (r.t.medianMs * 1e-3) / 1e9;
      r.isFixed = k == 1;
      rep.rows.push_back(r);
    }
    out.push_back(rep);
  }
  return out;
}

// ---- partial-warp-block ----
__host__ __device__ inline float work(float x, int k) {
  for (int j = 0; j < k; ++j) x = fmaf(x, 0.999f, 0.001f);  // one FFMA per step, on the CPU too
  return x;
}
__global__ void computeTail(const float* in, float* out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = work(in[i], k);
}

std::vector<Report> demoPartialWarp() {
  std::vector<Report> out;
  const int n = 1 << 24;
  auto h = randomFloats(n, 41);
  DeviceBuffer<float> in(n), o(n);
  in.upload(h);
  for (int k : {512, 0}) {
    Report rep;
    rep.demo = "partial-warp-block";
    rep.title = k ? "compute-bound (512 FMAs per element): 100, 48 and 33 threads per block vs 128 and 64"
                  : "memory-bound copy: 100 threads per block vs 128";
    rep.size = "16M elements";
    rep.finding = "partial-warp-block: \"the last warp has 28 of 32 lanes idle (22% of the block's lanes do nothing)\"";
    std::vector<unsigned> sizes = k ? std::vector<unsigned>{100, 48, 33, 128, 64} : std::vector<unsigned>{100, 128};
    for (unsigned bs : sizes) {
      Row r;
      r.variant = std::to_string(bs) + " threads per block";
      progress(rep.demo, r.variant);
      unsigned grid = (n + bs - 1) / bs;
      r.t = timeIt([&] { computeTail<<<grid, bs>>>(in.p, o.p, n, k); }, [&] { o.poison(); });
      auto got = o.download();
      for (int i = 0; i < n && r.correct; i += 997) r.correct = std::fabs(got[i] - work(h[i], k)) <= 1e-5f * std::fabs(work(h[i], k)) + 1e-6f;
      r.gbs = n * 8.0 / (r.t.medianMs * 1e-3) / 1e9;
      unsigned warps = (bs + 31) / 32;
      r.note = bs % 32 ? std::to_string(warps * 32 - bs) + " of " + std::to_string(warps * 32) + " lanes idle" : std::string("full warps");
      r.isFixed = bs == 128;
      rep.rows.push_back(r);
    }
    out.push_back(rep);
  }
  return out;
}

// ---- double-promotion ----
__global__ void polyDouble(const float* in, float* out, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  for (int j = 0; j < k; ++j) v = v * 1.1 - 0.1;  // double literals: F2F + DFMA + F2F
  out[i] = v;
}
__global__ void polyFloat(const float* in, float* out, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  for (int j = 0; j < k; ++j) v = v * 1.1f - 0.1f;
  out[i] = v;
}

std::vector<Report> demoDoublePromotion() {
  Report rep;
  rep.demo = "double-promotion";
  rep.title = "v = v * 1.1 - 0.1 (double literals) vs v * 1.1f - 0.1f, 256 steps per element";
  const int n = 1 << 24, k = 256;
  rep.size = "16M elements, 256 steps";
  rep.finding = "double-promotion: \"'1.1' is a double literal, so the float 'v' is converted to double\"";
  auto h = randomFloats(n, 51, 0.5f, 1.0f);
  DeviceBuffer<float> in(n), o(n);
  in.upload(h);
  for (int v = 0; v < 2; ++v) {
    Row r;
    r.variant = v == 0 ? "double literals (promoted)" : "float literals";
    progress(rep.demo, r.variant);
    r.t = timeIt([&] { if (v == 0) polyDouble<<<n / 256, 256>>>(in.p, o.p, k); else polyFloat<<<n / 256, 256>>>(in.p, o.p, k); },
                 [&] { o.poison(); });
    auto got = o.download();
    for (int i = 0; i < n && r.correct; i += 991) {
      float x = h[i];
      for (int j = 0; j < k; ++j) x = v == 0 ? float(double(x) * 1.1 - 0.1) : std::fma(x, 1.1f, -0.1f);
      r.correct = std::fabs(got[i] - x) <= 1e-3f * std::fabs(x) + 1e-3f;
    }
    r.isFixed = v == 1;
    r.note = v == 0 ? "per step: F2F.F64.F32, DFMA, F2F.F32.F64" : "per step: one FFMA";
    rep.rows.push_back(r);
  }
  rep.remarks.push_back("H100 (sm_90) runs FP64 at half the FP32 rate; consumer GPUs (e.g. sm_89, sm_86) at 1/64 "
                        "(NVIDIA's CUDA C++ Programming Guide, arithmetic instruction throughput table): the same code "
                        "costs far more there");
  return {rep};
}

// ---- dynamic-local-array ----
__global__ void histLocal(const unsigned* in, unsigned* out, int n, int per) {
  unsigned h[32];
#pragma unroll
  for (int b = 0; b < 32; ++b) h[b] = 0;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < per; ++k) h[in[k * n + i] & 31] += 1;
#pragma unroll
  for (int b = 0; b < 32; ++b) out[b * n + i] = h[b];
}
__global__ void histShared(const unsigned* in, unsigned* out, int n, int per) {
  __shared__ unsigned h[32][128];
  for (int b = 0; b < 32; ++b) h[b][threadIdx.x] = 0;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < per; ++k) h[in[k * n + i] & 31][threadIdx.x] += 1;
  for (int b = 0; b < 32; ++b) out[b * n + i] = h[b][threadIdx.x];
}

std::vector<Report> demoLocalArray() {
  Report rep;
  rep.demo = "dynamic-local-array";
  rep.title = "per-thread 32-bin histogram: unsigned h[32] indexed by data (local memory) vs a shared-memory slice";
  const int n = 1 << 20, per = 64;
  rep.size = "1M threads x 64 values";
  rep.finding = "dynamic-local-array: \"per-thread array 'h' (32 elements, 128 bytes per thread) is written with an index the compiler cannot resolve\"";
  auto h = randomInts(size_t(n) * per, 61, 0, 1 << 30);
  std::vector<unsigned> hu(h.begin(), h.end());
  DeviceBuffer<unsigned> in(size_t(n) * per), o(size_t(n) * 32);
  in.upload(hu);
  for (int v = 0; v < 2; ++v) {
    Row r;
    r.variant = v == 0 ? "local array (LDL/STL)" : "shared slice per thread";
    progress(rep.demo, r.variant);
    r.t = timeIt([&] {
      if (v == 0) histLocal<<<n / 128, 128>>>(in.p, o.p, n, per);
      else histShared<<<n / 128, 128>>>(in.p, o.p, n, per);
    }, [&] { o.poison(); });
    auto got = o.download();
    for (int i = 0; i < n && r.correct; i += 1009) {
      unsigned ref[32] = {};
      for (int k = 0; k < per; ++k) ++ref[hu[size_t(k) * n + i] & 31];
      for (int b = 0; b < 32; ++b) r.correct = r.correct && got[size_t(b) * n + i] == ref[b];
    }
    r.gbs = (double(n) * per * 4 + double(n) * 32 * 4) / (r.t.medianMs * 1e-3) / 1e9;
    r.isFixed = v == 1;
    rep.rows.push_back(r);
  }
  return {rep};
}

}  // namespace gpuopt::demos
