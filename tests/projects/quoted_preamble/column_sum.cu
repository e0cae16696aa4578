#include "ops.cuh"

__global__ void columnSum(const float* m, float* out, Dims d, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < d.rows) out[rowStart(cols, row)] = columnValue(m, d, row) * MODE_FACTOR;
}

void launchColumnSum(const float* m, float* out, Dims d) {
  columnSum<<<(d.rows + 255) / 256, 256>>>(m, out, d, d.cols);
}
