// Costs that the source text does not show, because they depend on the data a run reads: the
// static model cannot decide them, the profile's counters measure them (measured-only findings of
// `gpuopt-lint profile`). Build: nvcc -lineinfo -arch=sm_90 -o hidden samples/profile/hidden_costs.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

// Random input: about half of each warp's lanes take the branch, and the long body runs with the
// other half idle.
__global__ void threshold(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = in[i];
  if (v > 0.5f) {
    float acc = v;
    for (int k = 0; k < 256; ++k) acc = acc * 0.999f + 0.25f;
    out[i] = acc;
  }
}

// The stride is data (read from a table at run time): 32 lanes touch 32 sectors.
__global__ void stridedByTable(const float* in, float* out, const int* cfg, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = cfg[0];
  if (i < n) out[i] = in[size_t(i) * stride];
}

// The shared index is data: the table maps lane l to word 32 * l, all in bank 0.
__global__ void sharedByTable(const int* lanes, float* out) {
  __shared__ float s[1024];
  for (int k = threadIdx.x; k < 1024; k += blockDim.x) s[k] = float(k);
  __syncthreads();
  int j = lanes[threadIdx.x & 31];
  float acc = 0.f;
  for (int r = 0; r < 64; ++r) acc += s[(j + r) & 1023];
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

int main() {
  const int n = 1 << 22, stride = 32, blocks = 1024;
  std::vector<float> h(size_t(n) * stride);
  srand(7);
  for (auto& x : h) x = float(rand()) / float(RAND_MAX);
  std::vector<int> lanes(32);
  for (int l = 0; l < 32; ++l) lanes[l] = 32 * l;
  float *in = nullptr, *out = nullptr;
  int *cfg = nullptr, *dl = nullptr;
  if (cudaMalloc(&in, h.size() * sizeof(float)) != cudaSuccess) {
    fprintf(stderr, "hidden_costs: no CUDA device memory\n");
    return 1;
  }
  cudaMalloc(&out, size_t(n) * sizeof(float));
  cudaMalloc(&cfg, sizeof(int));
  cudaMalloc(&dl, 32 * sizeof(int));
  cudaMemcpy(in, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(cfg, &stride, sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(dl, lanes.data(), 32 * sizeof(int), cudaMemcpyHostToDevice);
  threshold<<<n / 256, 256>>>(in, out, n);
  stridedByTable<<<n / 256, 256>>>(in, out, cfg, n);
  sharedByTable<<<blocks, 256>>>(dl, out);
  cudaError_t e = cudaDeviceSynchronize();
  printf("hidden_costs: %s\n", cudaGetErrorString(e));
  cudaFree(in);
  cudaFree(out);
  cudaFree(cfg);
  cudaFree(dl);
  return e == cudaSuccess ? 0 : 1;
}
