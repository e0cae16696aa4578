// A project's common header, as most CUDA projects start every unit with: guarded, CUDA headers
// and project helpers (a device helper with a strided load that the kernels below inherit).
#pragma once
#include <cuda_runtime.h>

#include "modes.h"

struct Dims {
  int rows, cols;
};

// The index of a row's first element: a kernel storing there is uncoalesced only if the model
// reads this body (from the preamble's PCH when the unit is parsed with it).
__device__ inline int rowStart(int cols, int row) { return row * cols; }

__device__ inline float columnValue(const float* m, Dims d, int row) {
  return m[row * d.cols];  // a column: adjacent lanes are d.cols floats apart
}
