// divergent-branch: tid % 2 branches with real work on both paths vs the warp-aligned split;
// reduce0 (modulo) vs sequential addressing.
#include "kernels/harness.cuh"
#include "kernels/reductions.cuh"

namespace gpuopt::demos {

__host__ __device__ inline unsigned pathA(unsigned x, int k) {
  for (int i = 0; i < k; ++i) x = x * 1664525u + 1013904223u;
  return x;
}
__host__ __device__ inline unsigned pathB(unsigned x, int k) {
  for (int i = 0; i < k; ++i) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; }
  return x;
}

__global__ void branchModulo(unsigned* out, int k) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned x = i + 1;
  if (i % 2 == 0) x = pathA(x, k);  // half of every warp on each path
  else x = pathB(x, k);
  out[i] = x;
}

__global__ void branchWarp(unsigned* out, int k) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned x = i + 1;
  if ((i / 32) % 2 == 0) x = pathA(x, k);  // whole warps on each path
  else x = pathB(x, k);
  out[i] = x;
}

std::vector<Report> demoDivergent() {
  Report rep;
  rep.demo = "divergent-branch";
  rep.title = "if (i % 2 == 0) A else B, against if ((i / 32) % 2 == 0) A else B";
  const size_t n = size_t(1) << 22;
  const int k = 256;
  rep.size = "4M threads, 256 integer steps per path";
  rep.finding = "divergent-branch: \"16 of 32 lanes take the branch in every warp; both paths run one after the other\"";
  DeviceBuffer<unsigned> out(n);
  for (int v = 0; v < 2; ++v) {
    std::string name = v == 0 ? "i % 2 (divergent)" : "(i / 32) % 2 (warp-aligned)";
    progress("divergent-branch", name);
    Row r;
    r.variant = name;
    r.t = timeIt([&] {
      if (v == 0) branchModulo<<<unsigned(n / 256), 256>>>(out.p, k);
      else branchWarp<<<unsigned(n / 256), 256>>>(out.p, k);
    }, [&] { out.poison(); });
    auto o = out.download();
    for (size_t i = 0; i < n && r.correct; ++i) {
      bool a = v == 0 ? i % 2 == 0 : (i / 32) % 2 == 0;
      unsigned ref = a ? pathA(unsigned(i + 1), k) : pathB(unsigned(i + 1), k);
      r.correct = o[i] == ref;
    }
    r.isFixed = v == 1;
    r.note = v == 0 ? "2 paths per warp predicted: about 2x" : "1 path per warp";
    rep.rows.push_back(r);
  }
  char buf[256];
  snprintf(buf, sizeof buf, "both paths serialised predicted (about 2x), %.2fx measured", slowdown(rep, rep.rows[0]));
  rep.verdicts.push_back(buf);

  Report red;
  red.demo = "divergent-branch";
  red.title = "reduce0 (tid % (2*s) == 0) against sequential addressing (tid < s)";
  red.size = "2^24 ints, block 256";
  red.finding = "divergent-branch on 'tid % (2*s) == 0'";
  red.rows.push_back(reduceRow(0, size_t(1) << 24, "divergent-branch"));
  red.rows.push_back(reduceRow(2, size_t(1) << 24, "divergent-branch"));
  red.rows.back().isFixed = true;
  snprintf(buf, sizeof buf, "reduce0 %.2fx slower than sequential addressing", slowdown(red, red.rows[0]));
  red.verdicts.push_back(buf);
  return {rep, red};
}

}  // namespace gpuopt::demos
