// unused-block-dimension: a kernel that reads only threadIdx.x, launched with dim3(32, 8). The 8
// rows of every block compute (and store) the same elements: 8x the instructions, the same
// results. Fixed: a 1-D block of 256 threads, or the row index used (each row its own elements).
#include <cmath>

#include "kernels/harness.cuh"

namespace gpuopt::demos {

// Reads only threadIdx.x: launched with blockDim.y = 8, the rows repeat each other's work.
__global__ void saxpyRowsX(const float* x, float* y, float a, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int j = 0; j < k; ++j) v = fmaf(v, a, 0.25f);
  y[i] = v;
}

// The second dimension used: each row of the block takes its own 32 elements.
__global__ void saxpyRowsXY(const float* x, float* y, float a, int n, int k) {
  int i = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int j = 0; j < k; ++j) v = fmaf(v, a, 0.25f);
  y[i] = v;
}

namespace {
float reference(float v, float a, int k) {
  for (int j = 0; j < k; ++j) v = std::fma(v, a, 0.25f);
  return v;
}
}  // namespace

std::vector<Report> demoUnusedBlockDim() {
  std::vector<Report> out;
  const int n = 1 << 24, runs = 50;
  const float a = 0.5f;
  auto h = randomFloats(n, 61);
  DeviceBuffer<float> x(n), y(n);
  x.upload(h);
  std::vector<float> ref(n);
  for (int k : {0, 64}) {
    for (int i = 0; i < n; ++i) ref[i] = reference(h[i], a, k);
    Report rep;
    rep.demo = "unused-block-dimension";
    rep.title = k ? "compute-bound (64 FMAs per element): dim3(32, 8) with threadIdx.y unused vs a 256-thread block"
                  : "memory-bound (one load, one store): dim3(32, 8) with threadIdx.y unused vs a 256-thread block";
    rep.size = "16M floats; every element checked after " + std::to_string(runs) + " runs of the duplicated launch, 10 of each fix";
    rep.finding = "unused-block-dimension: \"the launch gives blockDim.y = 8, but 'saxpyRowsX' never reads threadIdx.y: "
                  "the 8 rows of each block compute the same elements\"";
    for (int v = 0; v < 3; ++v) {
      Row r;
      r.variant = v == 0 ? "dim3(32,8), x only: rows repeat"
                  : v == 1 ? "dim3(256) (fixed)"
                           : "dim3(32,8), rows used (fixed)";
      progress(rep.demo, r.variant);
      auto launch = [&] {
        if (v == 0) saxpyRowsX<<<(n + 31) / 32, dim3(32, 8)>>>(x.p, y.p, a, n, k);
        else if (v == 1) saxpyRowsX<<<(n + 255) / 256, 256>>>(x.p, y.p, a, n, k);
        else saxpyRowsXY<<<(n + 255) / 256, dim3(32, 8)>>>(x.p, y.p, a, n, k);
      };
      // Correctness: every element checked after each of `runs` launches (the duplicated rows
      // store the same value, so the race between them is benign for the result).
      size_t wrong = 0, badRuns = 0;
      const int checked = v == 0 ? runs : 10;
      for (int run = 0; run < checked; ++run) {
        y.poison();
        launch();
        GPUOPT_LAUNCH_CHECK();
        auto got = y.download();
        size_t w = 0;
        for (int i = 0; i < n; ++i)
          if (std::fabs(got[i] - ref[i]) > 1e-5f * std::fabs(ref[i]) + 1e-6f) ++w;
        wrong += w;
        badRuns += w > 0;
      }
      r.correct = wrong == 0;
      r.t = timeIt(launch, [&] { y.poison(); });
      r.gbs = n * 8.0 / (r.t.medianMs * 1e-3) / 1e9;
      r.note = "right in " + std::to_string(checked - badRuns) + " of " + std::to_string(checked) + " runs" +
               (v == 0 ? "; 8 threads compute each element" : "; 1 thread per element");
      r.isFixed = v == 1;
      rep.rows.push_back(r);
    }
    rep.remarks.push_back("the duplicated rows load the same addresses and store the same values: how much of the 8x "
                          "shows in the time depends on whether the kernel waits on memory or on instructions");
    out.push_back(rep);
  }
  return out;
}

}  // namespace gpuopt::demos
