// Particle, clustering, gather/scatter and sorting kernels written the way projects write them (our
// own code): issue 28's per-line cost estimate is checked against these kernels' counters.
// Build: nvcc -lineinfo -arch=sm_90 -o particles particles.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                    \
  do {                                                                              \
    cudaError_t err_ = (x);                                                         \
    if (err_ != cudaSuccess) {                                                      \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

// All-pairs N-body accelerations, bodies staged through shared memory tiles (float4: x, y, z, mass).
__global__ void nbodyTiled(const float4* __restrict__ pos, float3* __restrict__ acc, int n, float soft2) {
  extern __shared__ float4 sh[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 me = pos[i];
  float3 a = {0.0f, 0.0f, 0.0f};
  for (int tile = 0; tile < n; tile += blockDim.x) {
    sh[threadIdx.x] = pos[tile + threadIdx.x];
    __syncthreads();
    for (int j = 0; j < blockDim.x; ++j) {
      float4 o = sh[j];
      float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
      float r2 = dx * dx + dy * dy + dz * dz + soft2;
      float inv = rsqrtf(r2);
      float s = o.w * inv * inv * inv;
      a.x += dx * s;
      a.y += dy * s;
      a.z += dz * s;
    }
    __syncthreads();
  }
  acc[i] = a;
}

// Array-of-structures particle update (explicit Euler): each field read is 32 bytes apart.
struct Particle {
  float x, y, z, vx, vy, vz, mass, charge;
};
__global__ void advanceAoS(Particle* __restrict__ p, const float3* __restrict__ force, int n, float dt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float invm = 1.0f / p[i].mass;
  p[i].vx += force[i].x * invm * dt;
  p[i].vy += force[i].y * invm * dt;
  p[i].vz += force[i].z * invm * dt;
  p[i].x += p[i].vx * dt;
  p[i].y += p[i].vy * dt;
  p[i].z += p[i].vz * dt;
}

// k-means assignment step: centroids cached in shared memory, points stored dimension-major.
__global__ void kmeansAssign(const float* __restrict__ pts, const float* __restrict__ centroids, int* __restrict__ label,
                             int n, int dims, int k) {
  extern __shared__ float c[];
  for (int t = threadIdx.x; t < k * dims; t += blockDim.x) c[t] = centroids[t];
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float best = 3.4e38f;
  int bestK = 0;
  for (int j = 0; j < k; ++j) {
    float d = 0.0f;
    for (int f = 0; f < dims; ++f) {
      float diff = pts[(size_t)f * n + i] - c[j * dims + f];
      d += diff * diff;
    }
    if (d < best) best = d, bestK = j;
  }
  label[i] = bestK;
}

// Embedding lookup (gather rows by token id) and its gradient (scatter-add into the table).
__global__ void embeddingGather(const int* __restrict__ tokens, const float* __restrict__ table,
                                float* __restrict__ out, int ntok, int dim) {
  int t = blockIdx.x, d = threadIdx.x;
  if (t >= ntok) return;
  int id = tokens[t];
  for (int c = d; c < dim; c += blockDim.x) out[(size_t)t * dim + c] = table[(size_t)id * dim + c];
}
__global__ void embeddingScatterAdd(const int* __restrict__ tokens, const float* __restrict__ grad,
                                    float* __restrict__ tableGrad, int ntok, int dim) {
  int t = blockIdx.x;
  int id = tokens[t];
  for (int c = threadIdx.x; c < dim; c += blockDim.x) atomicAdd(&tableGrad[(size_t)id * dim + c], grad[(size_t)t * dim + c]);
}

// Element gather by an index array (permutation): out[i] = in[perm[i]].
__global__ void gatherPermute(const float* __restrict__ in, const int* __restrict__ perm, float* __restrict__ out,
                              int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[perm[i]];
}

// One step of a bitonic sort over global memory.
__global__ void bitonicStep(float* __restrict__ a, int j, int k) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned ixj = i ^ j;
  if (ixj > i) {
    float x = a[i], y = a[ixj];
    bool up = (i & k) == 0;
    if ((x > y) == up) {
      a[i] = y;
      a[ixj] = x;
    }
  }
}

int main() {
  srand(9);
  const int nb = 16384;
  std::vector<float> h(size_t(1) << 24);
  for (auto& v : h) v = float(rand() % 1000) / 100.0f + 0.01f;
  float4* pos;
  float3* acc;
  CHECK(cudaMalloc(&pos, sizeof(float4) * nb));
  CHECK(cudaMalloc(&acc, sizeof(float3) * (1 << 20)));
  CHECK(cudaMemcpy(pos, h.data(), sizeof(float4) * nb, cudaMemcpyHostToDevice));
  nbodyTiled<<<nb / 256, 256, 256 * sizeof(float4)>>>(pos, acc, nb, 0.01f);
  const int np = 1 << 20;
  Particle* p;
  CHECK(cudaMalloc(&p, sizeof(Particle) * np));
  CHECK(cudaMemcpy(p, h.data(), sizeof(Particle) * np, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(acc, h.data(), sizeof(float3) * np, cudaMemcpyHostToDevice));
  advanceAoS<<<np / 256, 256>>>(p, acc, np, 0.001f);
  float *pts, *cent;
  int* label;
  const int npts = 1 << 20, dims = 8, k = 16;
  CHECK(cudaMalloc(&pts, sizeof(float) * npts * dims));
  CHECK(cudaMalloc(&cent, sizeof(float) * k * dims));
  CHECK(cudaMalloc(&label, sizeof(int) * npts));
  CHECK(cudaMemcpy(pts, h.data(), sizeof(float) * npts * dims, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(cent, h.data(), sizeof(float) * k * dims, cudaMemcpyHostToDevice));
  kmeansAssign<<<npts / 256, 256, sizeof(float) * k * dims>>>(pts, cent, label, npts, dims, k);
  const int vocab = 32768, dim = 512, ntok = 8192;
  std::vector<int> tok(ntok), perm(1 << 22);
  for (auto& t : tok) t = rand() % vocab;
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = int(i);
  for (size_t i = perm.size() - 1; i > 0; --i) std::swap(perm[i], perm[rand() % (i + 1)]);
  int *dtok, *dperm;
  float *table, *emb, *tgrad;
  CHECK(cudaMalloc(&dtok, sizeof(int) * ntok));
  CHECK(cudaMalloc(&dperm, sizeof(int) * perm.size()));
  CHECK(cudaMalloc(&table, sizeof(float) * vocab * dim));
  CHECK(cudaMalloc(&emb, sizeof(float) * ntok * dim));
  CHECK(cudaMalloc(&tgrad, sizeof(float) * vocab * dim));
  CHECK(cudaMemcpy(dtok, tok.data(), sizeof(int) * ntok, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dperm, perm.data(), sizeof(int) * perm.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(table, 0, sizeof(float) * vocab * dim));
  CHECK(cudaMemset(tgrad, 0, sizeof(float) * vocab * dim));
  embeddingGather<<<ntok, 128>>>(dtok, table, emb, ntok, dim);
  embeddingScatterAdd<<<ntok, 128>>>(dtok, emb, tgrad, ntok, dim);
  gatherPermute<<<(1 << 22) / 256, 256>>>(pts, dperm, emb, 1 << 22);
  float* sortv;
  CHECK(cudaMalloc(&sortv, sizeof(float) * (1 << 22)));
  CHECK(cudaMemcpy(sortv, h.data(), sizeof(float) * (1 << 22), cudaMemcpyHostToDevice));
  bitonicStep<<<(1 << 22) / 256, 256>>>(sortv, 1 << 15, 1 << 16);
  bitonicStep<<<(1 << 22) / 256, 256>>>(sortv, 4, 1 << 16);
  CHECK(cudaDeviceSynchronize());
  printf("particles: ok\n");
  return 0;
}
