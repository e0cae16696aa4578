// Held-out set for issue 28 (sparse and particle data): ELL SpMV in both layouts, COO SpMV with
// atomics, CSR row normalisation, particle updates in AoS and SoA layouts, a neighbour-list force
// loop and a strided field update, written the way projects write them (our own code). These
// kernels were written and recorded on the H100 before the linter's estimate was looked at for
// any of them.
// Build: nvcc -lineinfo -arch=sm_90 -O3 -o heldout_sparse heldout_sparse.cu
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

// ELLPACK, column-major (slot k of row r at k * rows + r): one thread per row, -1 pads.
__global__ void spmvEll(const int* __restrict__ colIdx, const float* __restrict__ vals, const float* __restrict__ x,
                        float* __restrict__ y, int rows, int width) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float sum = 0.0f;
  for (int k = 0; k < width; ++k) {
    int c = colIdx[(size_t)k * rows + r];
    if (c < 0) break;
    sum += vals[(size_t)k * rows + r] * x[c];
  }
  y[r] = sum;
}

// ELLPACK stored row-major (slot k of row r at r * width + k), as a port from CPU code keeps it.
__global__ void spmvEllRowMajor(const int* __restrict__ colIdx, const float* __restrict__ vals,
                                const float* __restrict__ x, float* __restrict__ y, int rows, int width) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float sum = 0.0f;
  for (int k = 0; k < width; ++k) {
    int c = colIdx[(size_t)r * width + k];
    if (c >= 0) sum += vals[(size_t)r * width + k] * x[c];
  }
  y[r] = sum;
}

// COO SpMV: one thread per nonzero, atomics into y.
__global__ void spmvCooAtomic(const int* __restrict__ rowIdx, const int* __restrict__ colIdx, const float* __restrict__ vals,
                              const float* __restrict__ x, float* __restrict__ y, int nnz) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < nnz) atomicAdd(&y[rowIdx[i]], vals[i] * x[colIdx[i]]);
}

// CSR row normalisation to unit L2 norm: one thread per row, two passes over the row.
__global__ void csrNormalizeRows(const int* __restrict__ rowPtr, float* __restrict__ vals, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  int begin = rowPtr[r], end = rowPtr[r + 1];
  float ss = 0.0f;
  for (int j = begin; j < end; ++j) ss += vals[j] * vals[j];
  float inv = ss > 0.0f ? rsqrtf(ss) : 0.0f;
  for (int j = begin; j < end; ++j) vals[j] *= inv;
}

struct Particle {
  float3 pos;
  float3 vel;
  float mass;
  int species;
};

// Leapfrog step on an array of structs.
__global__ void integrateAoS(Particle* __restrict__ p, const float3* __restrict__ force, float dt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float3 f = force[i];
  float invm = 1.0f / p[i].mass;
  p[i].vel.x += dt * f.x * invm;
  p[i].vel.y += dt * f.y * invm;
  p[i].vel.z += dt * f.z * invm;
  p[i].pos.x += dt * p[i].vel.x;
  p[i].pos.y += dt * p[i].vel.y;
  p[i].pos.z += dt * p[i].vel.z;
}

// The same step on a struct of arrays.
__global__ void integrateSoA(float* __restrict__ px, float* __restrict__ py, float* __restrict__ pz,
                             float* __restrict__ vx, float* __restrict__ vy, float* __restrict__ vz,
                             const float* __restrict__ invMass, const float* __restrict__ fx,
                             const float* __restrict__ fy, const float* __restrict__ fz, float dt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float w = dt * invMass[i];
  float nvx = vx[i] + w * fx[i];
  float nvy = vy[i] + w * fy[i];
  float nvz = vz[i] + w * fz[i];
  vx[i] = nvx;
  vy[i] = nvy;
  vz[i] = nvz;
  px[i] += dt * nvx;
  py[i] += dt * nvy;
  pz[i] += dt * nvz;
}

// Short-range forces from a column-major neighbour list (slot k of particle i at k * n + i):
// the own position once, the neighbours' positions in the loop, the force once at the end.
__global__ void neighborForces(const float4* __restrict__ pos, const int* __restrict__ nbrCount, const int* __restrict__ nbrList,
                               float4* __restrict__ force, float cutoff2, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 pi = pos[i];
  int count = nbrCount[i];
  float fx = 0.0f, fy = 0.0f, fz = 0.0f;
  for (int k = 0; k < count; ++k) {
    int j = nbrList[(size_t)k * n + i];
    float4 pj = pos[j];
    float dx = pi.x - pj.x, dy = pi.y - pj.y, dz = pi.z - pj.z;
    float r2 = dx * dx + dy * dy + dz * dz;
    if (r2 < cutoff2 && r2 > 0.0f) {
      float inv2 = 1.0f / r2;
      float inv6 = inv2 * inv2 * inv2;
      float s = 24.0f * inv2 * inv6 * (2.0f * inv6 - 1.0f);
      fx += s * dx;
      fy += s * dy;
      fz += s * dz;
    }
  }
  force[i] = make_float4(fx, fy, fz, 0.0f);
}

// Scales one component of an interleaved multi-component field (every `stride`-th value).
__global__ void scaleComponent(float* __restrict__ field, int stride, int component, float s, int points) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < points) field[(size_t)p * stride + component] *= s;
}

int main() {
  srand(23);
  // A banded-random sparse matrix: `rows` rows, 8..32 nonzeros each.
  const int rows = 1 << 20, width = 32;
  std::vector<int> ellCol((size_t)rows * width, -1), ellColRM((size_t)rows * width, -1);
  std::vector<float> ellVal((size_t)rows * width, 0.0f), ellValRM((size_t)rows * width, 0.0f);
  std::vector<int> rowPtr(rows + 1, 0), cooRow, cooCol;
  std::vector<float> cooVal;
  for (int r = 0; r < rows; ++r) {
    int len = 8 + rand() % 25;
    for (int k = 0; k < len; ++k) {
      int c = (r + (rand() % 4096) - 2048 + rows) % rows;
      float v = float(rand() % 100) / 100.0f;
      ellCol[(size_t)k * rows + r] = c;
      ellVal[(size_t)k * rows + r] = v;
      ellColRM[(size_t)r * width + k] = c;
      ellValRM[(size_t)r * width + k] = v;
      cooRow.push_back(r);
      cooCol.push_back(c);
      cooVal.push_back(v);
    }
    rowPtr[r + 1] = rowPtr[r] + len;
  }
  const int nnz = int(cooVal.size());
  int *dEllCol, *dEllColRM, *dRowPtr, *dCooRow, *dCooCol;
  float *dEllVal, *dEllValRM, *dCooVal, *x, *y;
  CHECK(cudaMalloc(&dEllCol, sizeof(int) * ellCol.size()));
  CHECK(cudaMalloc(&dEllColRM, sizeof(int) * ellCol.size()));
  CHECK(cudaMalloc(&dEllVal, sizeof(float) * ellVal.size()));
  CHECK(cudaMalloc(&dEllValRM, sizeof(float) * ellVal.size()));
  CHECK(cudaMalloc(&dRowPtr, sizeof(int) * rowPtr.size()));
  CHECK(cudaMalloc(&dCooRow, sizeof(int) * nnz));
  CHECK(cudaMalloc(&dCooCol, sizeof(int) * nnz));
  CHECK(cudaMalloc(&dCooVal, sizeof(float) * nnz));
  CHECK(cudaMalloc(&x, sizeof(float) * rows));
  CHECK(cudaMalloc(&y, sizeof(float) * rows));
  CHECK(cudaMemcpy(dEllCol, ellCol.data(), sizeof(int) * ellCol.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dEllColRM, ellColRM.data(), sizeof(int) * ellCol.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dEllVal, ellVal.data(), sizeof(float) * ellVal.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dEllValRM, ellValRM.data(), sizeof(float) * ellVal.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dRowPtr, rowPtr.data(), sizeof(int) * rowPtr.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dCooRow, cooRow.data(), sizeof(int) * nnz, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dCooCol, cooCol.data(), sizeof(int) * nnz, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dCooVal, cooVal.data(), sizeof(float) * nnz, cudaMemcpyHostToDevice));
  std::vector<float> hx(rows);
  for (auto& v : hx) v = float(rand() % 100) / 50.0f;
  CHECK(cudaMemcpy(x, hx.data(), sizeof(float) * rows, cudaMemcpyHostToDevice));

  // Particles on a jittered lattice; neighbours: 16..48 nearby indices each.
  const int np = 1 << 21, maxNbr = 48;
  std::vector<float4> hpos(np);
  for (int i = 0; i < np; ++i)
    hpos[i] = make_float4(float(i % 128) + float(rand() % 100) / 200.0f, float((i / 128) % 128) + float(rand() % 100) / 200.0f,
                          float(i / 16384) + float(rand() % 100) / 200.0f, 0.0f);
  std::vector<int> hcount(np), hlist((size_t)np * maxNbr, 0);
  for (int i = 0; i < np; ++i) {
    int c = 16 + rand() % 33;
    hcount[i] = c;
    for (int k = 0; k < c; ++k) {
      int d = (rand() % 3 - 1) + 128 * (rand() % 3 - 1) + 16384 * (rand() % 3 - 1);
      hlist[(size_t)k * np + i] = ((i + d) % np + np) % np;
    }
  }
  float4 *dpos, *dforce;
  int *dcount, *dlist;
  CHECK(cudaMalloc(&dpos, sizeof(float4) * np));
  CHECK(cudaMalloc(&dforce, sizeof(float4) * np));
  CHECK(cudaMalloc(&dcount, sizeof(int) * np));
  CHECK(cudaMalloc(&dlist, sizeof(int) * hlist.size()));
  CHECK(cudaMemcpy(dpos, hpos.data(), sizeof(float4) * np, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dcount, hcount.data(), sizeof(int) * np, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dlist, hlist.data(), sizeof(int) * hlist.size(), cudaMemcpyHostToDevice));

  const int na = 1 << 22;
  Particle* aos;
  CHECK(cudaMalloc(&aos, sizeof(Particle) * na));
  std::vector<Particle> hp(na);
  for (auto& q : hp) q = Particle{make_float3(1, 2, 3), make_float3(0, 0, 0), 1.0f + float(rand() % 10), rand() % 4};
  CHECK(cudaMemcpy(aos, hp.data(), sizeof(Particle) * na, cudaMemcpyHostToDevice));
  float* soa;
  CHECK(cudaMalloc(&soa, sizeof(float) * na * 10));
  CHECK(cudaMemset(soa, 0, sizeof(float) * na * 10));
  float* f3;
  CHECK(cudaMalloc(&f3, sizeof(float3) * na));
  CHECK(cudaMemset(f3, 0, sizeof(float3) * na));

  const int points = 1 << 22, comps = 8;
  float* field;
  CHECK(cudaMalloc(&field, sizeof(float) * points * comps));
  CHECK(cudaMemset(field, 0, sizeof(float) * points * comps));

  for (int rep = 0; rep < 2; ++rep) {
    spmvEll<<<(rows + 255) / 256, 256>>>(dEllCol, dEllVal, x, y, rows, width);
    spmvEllRowMajor<<<(rows + 255) / 256, 256>>>(dEllColRM, dEllValRM, x, y, rows, width);
    CHECK(cudaMemset(y, 0, sizeof(float) * rows));
    spmvCooAtomic<<<(nnz + 255) / 256, 256>>>(dCooRow, dCooCol, dCooVal, x, y, nnz);
    csrNormalizeRows<<<(rows + 127) / 128, 128>>>(dRowPtr, dCooVal, rows);
    integrateAoS<<<(na + 255) / 256, 256>>>(aos, (const float3*)f3, 0.01f, na);
    integrateSoA<<<(na + 255) / 256, 256>>>(soa, soa + na, soa + 2 * (size_t)na, soa + 3 * (size_t)na, soa + 4 * (size_t)na,
                                            soa + 5 * (size_t)na, soa + 6 * (size_t)na, soa + 7 * (size_t)na,
                                            soa + 8 * (size_t)na, soa + 9 * (size_t)na, 0.01f, na);
    neighborForces<<<(np + 127) / 128, 128>>>(dpos, dcount, dlist, dforce, 2.5f * 2.5f, np);
    scaleComponent<<<(points + 255) / 256, 256>>>(field, comps, 3, 0.5f, points);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  float y0 = 0.0f;
  CHECK(cudaMemcpy(&y0, y, sizeof(float), cudaMemcpyDeviceToHost));
  printf("heldout_sparse: ok (y[0] %.3f, nnz %d)\n", y0, nnz);
  return 0;
}
