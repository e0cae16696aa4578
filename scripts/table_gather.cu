// How much a data-dependent gather costs by the size of the table it reads, in a kernel that also
// streams its index and output (the shape of a particle-in-cell field gather: out[p] = tab[i[p]]).
// Compared with the same kernel reading tab[p % entries] (neighbouring lanes, neighbouring entries).
// Decides uncoalesced-access's `l1-table-bytes`: below it a gather is not reported.
// Build: nvcc -O3 -arch=sm_90 -o table_gather scripts/table_gather.cu; run: ./table_gather [BYTES]
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void gatherRandom(const double* __restrict__ tab, const int* __restrict__ idx, double* __restrict__ out, int n) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < n) out[p] = tab[idx[p]];
}
__global__ void gatherContiguous(const double* __restrict__ tab, const int* __restrict__ idx, double* __restrict__ out,
                                 int n, int entries) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < n) out[p] = tab[(p + (idx[p] & 0)) % entries];  // reads idx too: the same streams
}

int main(int argc, char** argv) {
  const int n = 1 << 24;
  std::vector<long> sizes = {256, 808, 2048, 4096, 8192, 16384, 32768, 65536, 262144, 1 << 20, 16 << 20, 256 << 20};
  int reps = 12;
  if (argc > 1) sizes = {atol(argv[1])}, reps = 3;  // one size (for ncu)
  int *dIdx;
  double *dTab, *dOut;
  cudaMalloc(&dIdx, n * sizeof(int));
  cudaMalloc(&dOut, n * sizeof(double));
  cudaMalloc(&dTab, 256 << 20);
  cudaMemset(dTab, 0, 256 << 20);
  std::vector<int> idx(n);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  printf("table_bytes entries random_ms contiguous_ms random/contiguous\n");
  for (long bytes : sizes) {
    int entries = static_cast<int>(bytes / sizeof(double));
    srand(2026);
    for (int i = 0; i < n; ++i) idx[i] = static_cast<int>(((static_cast<long>(rand()) << 16) ^ rand()) % entries);
    cudaMemcpy(dIdx, idx.data(), n * sizeof(int), cudaMemcpyHostToDevice);
    float best[2] = {1e30f, 1e30f};
    for (int rep = 0; rep < reps; ++rep)
      for (int k = 0; k < 2; ++k) {
        cudaEventRecord(a);
        if (k == 0) gatherRandom<<<n / 256, 256>>>(dTab, dIdx, dOut, n);
        else gatherContiguous<<<n / 256, 256>>>(dTab, dIdx, dOut, n, entries);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        if ((rep >= 2 || reps < 12) && ms < best[k]) best[k] = ms;  // two warm-up runs
      }
    printf("%ld %d %.4f %.4f %.2f\n", bytes, entries, best[0], best[1], best[0] / best[1]);
  }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) { printf("CUDA error: %s\n", cudaGetErrorString(e)); return 1; }
  return 0;
}
