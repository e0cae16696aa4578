// Does not compile alone (BLOCK comes from main.cu), so it is analysed as included by main.cu; the
// launch is not in main.cu but in moves.cpp, which main.cu also includes (HeCBench sss). Under
// the assumed 256-thread block, lanes 32-63 would overwrite what lanes 0-31 wrote (a
// missing-syncthreads false alarm); launched with 32 threads each lane owns its slot.
__global__ void slots(int* out) {
  __shared__ int cache[BLOCK];
  cache[threadIdx.x % 32] = out[blockIdx.x * BLOCK + threadIdx.x];
  __syncthreads();
  out[blockIdx.x * BLOCK + threadIdx.x] = cache[31 - threadIdx.x % 32];
}
// Read back by lane 0 with no barrier: a warp-level race under the 32-thread block.
__global__ void flag(const int* in, int* out) {
  __shared__ int any;
  if (threadIdx.x == 0) any = 0;
  __syncthreads();
  any = in[blockIdx.x * BLOCK + threadIdx.x];  // expect: unsafe-warp-reduce
  if (threadIdx.x == 0) out[blockIdx.x] = any;
}
