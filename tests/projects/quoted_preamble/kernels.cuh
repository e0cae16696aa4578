// A guarded header that defines a kernel: kernels are analysed from the parse, never from a PCH.
#pragma once
#include "common.cuh"

__global__ void scaleRows(float* m, Dims d) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < d.rows) m[r * d.cols] *= MODE_FACTOR;  // a column again
}
