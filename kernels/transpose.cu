#include "kernels/transpose.cuh"

namespace gpuopt::demos {

constexpr int kTile = 32, kRows = 8;

// V1: reads coalesced, writes strided by n.
__global__ void transposeNaive(const float* a, float* b, int n) {
  int x = blockIdx.x * kTile + threadIdx.x, y = blockIdx.y * kTile + threadIdx.y;
  for (int k = 0; k < kTile; k += kRows) b[x * n + (y + k)] = a[(y + k) * n + x];
}

// V2 (PAD = 0): through a [32][32] tile, 32-way conflict on the transposed read. V3 (PAD = 1): padded.
template <int PAD>
__global__ void transposeTile(const float* a, float* b, int n) {
  __shared__ float tile[kTile][kTile + PAD];
  int x = blockIdx.x * kTile + threadIdx.x, y = blockIdx.y * kTile + threadIdx.y;
  for (int k = 0; k < kTile; k += kRows) tile[threadIdx.y + k][threadIdx.x] = a[(y + k) * n + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  for (int k = 0; k < kTile; k += kRows) b[(y + k) * n + x] = tile[threadIdx.x][threadIdx.y + k];
}

Report transposeReport(bool withNaive) {
  Report rep;
  const int n = 8192;
  size_t count = size_t(n) * n;
  auto h = randomFloats(count, 7);
  DeviceBuffer<float> a(count), b(count);
  a.upload(h);
  dim3 grid(n / kTile, n / kTile), block(kTile, kRows);
  auto verify = [&](Row& r) {
    auto out = b.download();
    for (int i = 0; i < n && r.correct; ++i)
      for (int j = 0; j < n; ++j)
        if (out[size_t(j) * n + i] != h[size_t(i) * n + j]) { r.correct = false; break; }
  };
  auto run = [&](const std::string& name, auto launch, bool fixed, const std::string& note) {
    progress(withNaive ? "uncoalesced-access" : "bank-conflict", name);
    Row r;
    r.variant = name;
    r.t = timeIt(launch, [&] { b.poison(); });
    verify(r);
    r.gbs = 2.0 * count * sizeof(float) / (r.t.medianMs * 1e-3) / 1e9;
    r.isFixed = fixed;
    r.note = note;
    rep.rows.push_back(r);
  };
  if (withNaive)
    run("transpose naive (V1)", [&] { transposeNaive<<<grid, block>>>(a.p, b.p, n); }, false,
        "strided writes: 32 sectors per warp store");
  run("transpose tile [32][32] (V2)", [&] { transposeTile<0><<<grid, block>>>(a.p, b.p, n); }, false,
      withNaive ? "coalesced, 32-way bank conflict" : "32-way conflict predicted");
  run("transpose tile [32][33] (V3)", [&] { transposeTile<1><<<grid, block>>>(a.p, b.p, n); }, true,
      "coalesced, conflict-free");
  return rep;
}

}  // namespace gpuopt::demos
