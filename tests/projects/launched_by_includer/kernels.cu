// Compiles alone, but its kernels are launched by main.cu, which includes it: alone, their block
// would be assumed (256 threads, where thread 96 takes thread 0's slot); through main.cu it is 96x2.
__global__ void rows(float* out) {
  __shared__ float cache[256];
  int t = threadIdx.y * 96 + threadIdx.x % 96;
  cache[t] = out[t] + threadIdx.x;
  __syncthreads();
  out[t] = cache[(t + 1) % 192];
}
// A pitch of 64 under the 96x2 block: the two rows overlap in shared memory.
__global__ void rowsPitch64(float* out) {
  __shared__ float cache[256];
  int t = threadIdx.y * 64 + threadIdx.x % 96;
  cache[t] = out[threadIdx.y * 96 + threadIdx.x % 96];  // expect: missing-syncthreads
  __syncthreads();
  out[threadIdx.y * 96 + threadIdx.x % 96] = cache[t];
}
