// Probe for barrier-divergence's paired barriers (run on the GPU machine; see
// docs/rules/barrier-divergence.md): warp 0 and the other warps each reach their own __syncthreads()
// as the first barrier of their run. Checks the result (every thread reads what another warp wrote
// before the barrier) and is run under compute-sanitizer --tool synccheck and racecheck.
// Build: nvcc -arch=sm_90 -o probe scripts/paired_barriers_probe.cu; run: probe p | probe s [small]
#include <cstdio>
#include <vector>

__global__ void paired(const float* in, float* out) {
  __shared__ float tile[256];
  if (threadIdx.x < 32) {
    tile[threadIdx.x] = in[blockIdx.x * 32 + threadIdx.x];
    __syncthreads();
  } else {
    tile[threadIdx.x] = 1000.0f + threadIdx.x;
    __syncthreads();
  }
  out[blockIdx.x * 256 + threadIdx.x] = tile[(threadIdx.x + 32) % 256];
}

// The same with a split inside warp 0 (16 lanes each side).
__global__ void splitWarp(const float* in, float* out) {
  __shared__ float tile[256];
  if (threadIdx.x < 16) {
    tile[threadIdx.x] = in[blockIdx.x * 16 + threadIdx.x];
    __syncthreads();
  } else {
    tile[threadIdx.x] = 1000.0f + threadIdx.x;
    __syncthreads();
  }
  out[blockIdx.x * 256 + threadIdx.x] = tile[(threadIdx.x + 32) % 256];
}

int main(int argc, char** argv) {
  const int blocks = argc > 2 ? 64 : 4096;  // a second argument: 64 blocks (under the sanitizer)
  std::vector<float> h(blocks * 32), o(blocks * 256);
  for (size_t i = 0; i < h.size(); ++i) h[i] = float(i % 977);
  float *din, *dout;
  cudaMalloc(&din, h.size() * 4);
  cudaMalloc(&dout, o.size() * 4);
  cudaMemcpy(din, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
  bool split = argc > 1 && argv[1][0] == 's';
  int bad = 0;
  for (int run = 0; run < 20; ++run) {
    cudaMemset(dout, 0xff, o.size() * 4);
    if (split) splitWarp<<<blocks, 256>>>(din, dout);
    else paired<<<blocks, 256>>>(din, dout);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("error: %s\n", cudaGetErrorString(e)); return 2; }
    cudaMemcpy(o.data(), dout, o.size() * 4, cudaMemcpyDeviceToHost);
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < 256; ++t) {
        int src = (t + 32) % 256;
        int lim = split ? 16 : 32;
        float want = src < lim ? h[b * lim + src] : 1000.0f + src;
        if (o[b * 256 + t] != want) { ++bad; }
      }
  }
  printf("%s: %d wrong values in 20 runs of %d blocks\n", split ? "split inside a warp" : "paired (whole warps)", bad, blocks);
  return bad ? 1 : 0;
}
