// bank-conflict: the before/after kernels.
#include <numeric>

#include "kernels/harness.cuh"
#include "kernels/transpose.cuh"

namespace gpuopt::demos {

constexpr int kSmemWords = 2048;

// Every lane reads shared word (lane * STRIDE + it) mod 2048: gcd(STRIDE, 32)-way conflict.
template <int STRIDE>
__global__ void smemStride(const float* in, float* out, int iters) {
  __shared__ float s[kSmemWords];
  for (int k = threadIdx.x; k < kSmemWords; k += blockDim.x) s[k] = in[k];
  __syncthreads();
  int lane = threadIdx.x & 31;
  float acc = 0.f;
  for (int it = 0; it < iters; ++it) acc += s[(lane * STRIDE + it) & (kSmemWords - 1)];
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

template <int STRIDE>
static Row strideRow(const DeviceBuffer<float>& in, DeviceBuffer<float>& out, const std::vector<float>& hin, int blocks,
                     int iters) {
  std::string name = "stride " + std::to_string(STRIDE);
  progress("bank-conflict", name);
  Row r;
  r.variant = name;
  r.t = timeIt([&] { smemStride<STRIDE><<<blocks, 256>>>(in.p, out.p, iters); }, [&] { out.poison(); });
  auto h = out.download();
  float ref[32];
  for (int lane = 0; lane < 32; ++lane) {
    float acc = 0.f;
    for (int it = 0; it < iters; ++it) acc += hin[(lane * STRIDE + it) & (kSmemWords - 1)];
    ref[lane] = acc;
  }
  for (size_t i = 0; i < h.size() && r.correct; ++i)
    if (std::abs(h[i] - ref[i % 32]) > 1e-3f * std::abs(ref[i % 32])) r.correct = false;
  int ways = std::gcd(STRIDE, 32);
  if (STRIDE == 33) ways = 1;
  r.note = std::to_string(ways) + "-way conflict predicted";
  r.isFixed = STRIDE == 1;
  return r;
}

std::vector<Report> demoBankConflict() {
  Report rep;
  rep.demo = "bank-conflict";
  rep.title = "shared-memory stride sweep and the padded transpose tile";
  const int blocks = 132 * 16, iters = 4096;
  auto hin = randomFloats(kSmemWords, 1);
  DeviceBuffer<float> in(kSmemWords), out(size_t(blocks) * 256);
  in.upload(hin);
  rep.size = "stride sweep: " + std::to_string(blocks) + " blocks x 256 threads x 4096 shared loads; transpose: 8192x8192 floats";
  rep.finding = "bank-conflict: \"32-way bank conflict on shared load 'mat[threadIdx.x][threadIdx.y]'\"";
  rep.rows.push_back(strideRow<1>(in, out, hin, blocks, iters));
  rep.rows.push_back(strideRow<2>(in, out, hin, blocks, iters));
  rep.rows.push_back(strideRow<4>(in, out, hin, blocks, iters));
  rep.rows.push_back(strideRow<8>(in, out, hin, blocks, iters));
  rep.rows.push_back(strideRow<16>(in, out, hin, blocks, iters));
  rep.rows.push_back(strideRow<32>(in, out, hin, blocks, iters));
  rep.rows.push_back(strideRow<33>(in, out, hin, blocks, iters));
  double s32 = slowdown(rep, rep.rows[5]);
  char buf[256];
  snprintf(buf, sizeof buf, "32-way conflict predicted, %.1fx slower measured (stride 32 vs stride 1); stride 33 is %.2fx",
           s32, slowdown(rep, rep.rows[6]));
  rep.verdicts.push_back(buf);
  Report tr = transposeReport(false);
  tr.demo = "bank-conflict";
  tr.title = "matrix transpose through a [32][32] tile against the padded [32][33] tile";
  tr.size = "8192x8192 floats (256 MiB each way), block 32x8";
  tr.finding = rep.finding;
  if (tr.rows.size() == 2 && tr.rows[0].correct && tr.rows[1].correct) {
    snprintf(buf, sizeof buf, "32-way conflict predicted, [32][32] tile %.2fx slower than [32][33]; padded tile at %.0f%% of the copy ceiling",
             tr.rows[0].t.medianMs / tr.rows[1].t.medianMs, 100.0 * tr.rows[1].gbs / copyCeilingGBs());
    tr.verdicts.push_back(buf);
  }
  return {rep, tr};
}

}  // namespace gpuopt::demos
