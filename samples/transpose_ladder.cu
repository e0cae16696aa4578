// The lectures' matrix transpose, V1 to V4 (lecture 003). V1 is uncoalesced, V2 has a 32-way bank
// conflict, V3 and V4 are clean. Compare with `gpuopt-lint --demo bank-conflict` and
// `--demo uncoalesced-access`.
#define TILE 32
#define SIDE 8

__global__ void transposeNaive(const float* a, float* b, int sizeX, int sizeY) {
  int row = blockDim.y * blockIdx.y + threadIdx.y;
  int col = blockDim.x * blockIdx.x + threadIdx.x;
  b[row * sizeX + col] = a[col * sizeY + row];
}

__global__ void transposeShared(const float* a, float* b, int sizeX, int sizeY) {
  __shared__ float mat[TILE][TILE];
  int bx = blockIdx.x * TILE, by = blockIdx.y * TILE;
  int i = bx + threadIdx.x, j = by + threadIdx.y;
  int ti = by + threadIdx.x, tj = bx + threadIdx.y;
  if (i < sizeX && j < sizeY) mat[threadIdx.y][threadIdx.x] = a[j * sizeX + i];
  __syncthreads();
  if (tj < sizeY && ti < sizeX) b[tj * sizeY + ti] = mat[threadIdx.x][threadIdx.y];
}

__global__ void transposePadded(const float* a, float* b, int sizeX, int sizeY) {
  __shared__ float mat[TILE][TILE + 1];
  int bx = blockIdx.x * TILE, by = blockIdx.y * TILE;
  int i = bx + threadIdx.x, j = by + threadIdx.y;
  int ti = by + threadIdx.x, tj = bx + threadIdx.y;
  if (i < sizeX && j < sizeY) mat[threadIdx.y][threadIdx.x] = a[j * sizeX + i];
  __syncthreads();
  if (tj < sizeY && ti < sizeX) b[tj * sizeY + ti] = mat[threadIdx.x][threadIdx.y];
}

template <int T, int S>
__global__ void transposeUnrolled(const float* a, float* b, int sizeX, int sizeY) {
  __shared__ float mat[T][T + 1];
  int x = blockIdx.x * T + threadIdx.x;
  int y = blockIdx.y * T + threadIdx.y;
#pragma unroll
  for (int k = 0; k < T; k += S)
    if (x < sizeX && y + k < sizeY) mat[threadIdx.y + k][threadIdx.x] = a[(y + k) * sizeX + x];
  __syncthreads();
  x = blockIdx.y * T + threadIdx.x;
  y = blockIdx.x * T + threadIdx.y;
#pragma unroll
  for (int k = 0; k < T; k += S)
    if (x < sizeY && y + k < sizeX) b[(y + k) * sizeY + x] = mat[threadIdx.x][threadIdx.y + k];
}

void run(const float* a, float* b, int n) {
  dim3 grid(n / TILE, n / TILE);
  transposeNaive<<<grid, dim3(TILE, TILE)>>>(a, b, n, n);
  transposeShared<<<grid, dim3(TILE, TILE)>>>(a, b, n, n);
  transposePadded<<<grid, dim3(TILE, TILE)>>>(a, b, n, n);
  transposeUnrolled<TILE, SIDE><<<grid, dim3(TILE, SIDE)>>>(a, b, n, n);
}
