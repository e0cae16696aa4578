#include <cooperative_groups.h>

#include <numeric>

#include "kernels/reductions.cuh"

namespace gpuopt::demos {

constexpr int kBlock = 256;

__global__ void reduce0(const int* in, int* out) {  // interleaved addressing, modulo: divergent
  __shared__ int s[kBlock];
  unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = in[i];
  __syncthreads();
  for (unsigned st = 1; st < blockDim.x; st *= 2) {
    if (tid % (2 * st) == 0) s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

__global__ void reduce1(const int* in, int* out) {  // strided index: no divergence, bank conflicts
  __shared__ int s[kBlock];
  unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = in[i];
  __syncthreads();
  for (unsigned st = 1; st < blockDim.x; st *= 2) {
    unsigned index = 2 * st * tid;
    if (index < blockDim.x) s[index] += s[index + st];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

__global__ void reduce2(const int* in, int* out) {  // sequential addressing
  __shared__ int s[kBlock];
  unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = in[i];
  __syncthreads();
  for (unsigned st = blockDim.x / 2; st > 0; st >>= 1) {
    if (tid < st) s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

__global__ void reduce3(const int* in, int* out) {  // first add during load
  __shared__ int s[kBlock];
  unsigned tid = threadIdx.x, i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  s[tid] = in[i] + in[i + blockDim.x];
  __syncthreads();
  for (unsigned st = blockDim.x / 2; st > 0; st >>= 1) {
    if (tid < st) s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

__global__ void reduce4(const int* in, int* out) {  // unroll the last warp
  __shared__ int s[kBlock];
  unsigned tid = threadIdx.x, i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  s[tid] = in[i] + in[i + blockDim.x];
  __syncthreads();
  for (unsigned st = blockDim.x / 2; st > 32; st >>= 1) {
    if (tid < st) s[tid] += s[tid + st];
    __syncthreads();
  }
  if (tid < 32) warpReduceSafe(s, tid);
  if (tid == 0) out[blockIdx.x] = s[0];
}

template <unsigned BS>
__global__ void reduce5(const int* in, int* out) {  // completely unrolled
  __shared__ int s[BS];
  unsigned tid = threadIdx.x, i = blockIdx.x * (BS * 2) + threadIdx.x;
  s[tid] = in[i] + in[i + BS];
  __syncthreads();
  if (BS >= 512) { if (tid < 256) s[tid] += s[tid + 256]; __syncthreads(); }
  if (BS >= 256) { if (tid < 128) s[tid] += s[tid + 128]; __syncthreads(); }
  if (BS >= 128) { if (tid < 64) s[tid] += s[tid + 64]; __syncthreads(); }
  if (tid < 32) warpReduceSafe(s, tid);
  if (tid == 0) out[blockIdx.x] = s[0];
}

template <unsigned BS>
__global__ void reduce6(const int* in, int* out, size_t n) {  // algorithm cascading
  __shared__ int s[BS];
  unsigned tid = threadIdx.x;
  size_t i = blockIdx.x * (BS * 2) + threadIdx.x, grid = size_t(BS) * 2 * gridDim.x;
  int sum = 0;
  while (i < n) {
    sum += in[i] + in[i + BS];
    i += grid;
  }
  s[tid] = sum;
  __syncthreads();
  if (BS >= 512) { if (tid < 256) s[tid] += s[tid + 256]; __syncthreads(); }
  if (BS >= 256) { if (tid < 128) s[tid] += s[tid + 128]; __syncthreads(); }
  if (BS >= 128) { if (tid < 64) s[tid] += s[tid + 64]; __syncthreads(); }
  if (tid < 32) warpReduceSafe(s, tid);
  if (tid == 0) out[blockIdx.x] = s[0];
}

__global__ void reduceShfl(const int4* in, int* out, size_t n4) {  // int4 loads, grid-stride, warp shuffles
  __shared__ int warpSums[kBlock / 32];
  int sum = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(blockDim.x) * gridDim.x) {
    int4 v = in[i];
    sum += v.x + v.y + v.z + v.w;
  }
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
  if ((threadIdx.x & 31) == 0) warpSums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < kBlock / 32 ? warpSums[threadIdx.x] : 0;
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
  }
}

const char* reduceName(int w) {
  static const char* names[] = {"reduce0 interleaved (modulo)", "reduce1 interleaved (strided index)",
                                "reduce2 sequential addressing", "reduce3 first add during load",
                                "reduce4 unroll last warp", "reduce5 completely unrolled",
                                "reduce6 cascaded", "reduce7 shuffle + int4 loads"};
  return names[w];
}

Row reduceRow(int which, size_t n, const std::string& demo) {
  progress(demo, std::string(reduceName(which)) + " n=" + std::to_string(n));
  int dev = 0, sms = 0, l2 = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
  // Rotate over enough copies that the inputs of consecutive runs exceed 4x the L2.
  size_t copies = std::max<size_t>(1, (size_t(l2) * 4) / (n * sizeof(int)) + 1);
  copies = std::min<size_t>(copies, 64);
  auto h = randomInts(n, 42);
  long long ref = std::accumulate(h.begin(), h.end(), 0LL);
  DeviceBuffer<int> in(n * copies);
  for (size_t c = 0; c < copies; ++c)
    GPUOPT_CHECK(cudaMemcpy(in.p + c * n, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  unsigned blocks = static_cast<unsigned>(n / kBlock);
  if (which >= 3 && which <= 5) blocks /= 2;
  if (which == 6 || which == 7) blocks = std::min<unsigned>(blocks, sms * 8);
  DeviceBuffer<int> out(blocks);
  size_t rot = 0;
  auto launch = [&] {
    const int* src = in.p + (rot++ % copies) * n;
    switch (which) {
      case 0: reduce0<<<blocks, kBlock>>>(src, out.p); break;
      case 1: reduce1<<<blocks, kBlock>>>(src, out.p); break;
      case 2: reduce2<<<blocks, kBlock>>>(src, out.p); break;
      case 3: reduce3<<<blocks, kBlock>>>(src, out.p); break;
      case 4: reduce4<<<blocks, kBlock>>>(src, out.p); break;
      case 5: reduce5<kBlock><<<blocks, kBlock>>>(src, out.p); break;
      case 6: reduce6<kBlock><<<blocks, kBlock>>>(src, out.p, n); break;
      default: reduceShfl<<<blocks, kBlock>>>(reinterpret_cast<const int4*>(src), out.p, n / 4); break;
    }
  };
  Row r;
  r.variant = reduceName(which);
  r.t = timeIt(launch, [&] { out.poison(); });
  auto parts = out.download();
  long long got = std::accumulate(parts.begin(), parts.end(), 0LL);
  r.correct = got == ref;
  r.gbs = n * sizeof(int) / (r.t.medianMs * 1e-3) / 1e9;
  if (!r.correct) r.note = "sum " + std::to_string(got) + " != " + std::to_string(ref);
  return r;
}

// A streaming read of n ints (int4 loads), the read ceiling the reductions are compared with.
__global__ void readOnly(const int4* in, int* out, size_t n4) {
  int acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(blockDim.x) * gridDim.x) {
    int4 v = in[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) out[0] = acc;  // practically never: keeps the loads
}

static double readCeiling(size_t n) {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  DeviceBuffer<int> in(n), out(1);
  GPUOPT_CHECK(cudaMemset(in.p, 1, n * sizeof(int)));
  Timing t = timeIt([&] { readOnly<<<sms * 8, 256>>>(reinterpret_cast<const int4*>(in.p), out.p, n / 4); });
  return n * sizeof(int) / (t.medianMs * 1e-3) / 1e9;
}

std::vector<Report> demoReduction() {
  std::vector<Report> reps;
  for (size_t n : {size_t(1) << 24, size_t(1) << 20}) {
    Report rep;
    rep.demo = "reduction";
    rep.title = n == (size_t(1) << 24) ? "the reduction ladder at 2^24 ints" : "the reduction ladder at 2^20 ints (the lecture's size)";
    rep.size = std::to_string(n) + " ints (" + std::to_string(n * 4 >> 20) + " MiB), block 256; partial sums per block; "
               "GB/s = input bytes / time";
    rep.finding = "divergent-branch on reduce0, bank-conflict on reduce1, unsafe-warp-reduce on the volatile tail";
    for (int w = 0; w < 8; ++w) rep.rows.push_back(reduceRow(w, n, "reduction"));
    rep.rows.back().isFixed = true;
    double ceil = readCeiling(std::max<size_t>(n, size_t(1) << 26));
    char buf[256];
    const Row& best = rep.rows.back();
    snprintf(buf, sizeof buf, "best (%s) reads at %.0f GB/s = %.0f%% of the measured streaming-read ceiling %.0f GB/s; "
             "reduce0 is %.1fx slower", best.variant.c_str(), best.gbs, 100.0 * best.gbs / ceil, ceil,
             rep.rows[0].t.medianMs / best.t.medianMs);
    rep.verdicts.push_back(buf);
    if (n == (size_t(1) << 20))
      rep.remarks.push_back("at 2^20 each kernel runs for microseconds: launch overhead and the grid tail weigh more "
                            "than the memory pattern, so the ladder's steps are smaller than in the lecture");
    rep.remarks.push_back("reduce4..6 use the __syncwarp-safe last warp (the lecture's volatile-only tail is unsafe since Volta; "
                          "see --demo unsafe-warp-reduce)");
    reps.push_back(rep);
  }
  return reps;
}

}  // namespace gpuopt::demos
