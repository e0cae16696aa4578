// Compiles with nvcc through the CMake database only: its includes are in the response file.
#include "scale_config.h"
#include <vendor_math.cuh>
#include <omp.h>

#ifndef __CUDACC_EXTENDED_LAMBDA__
#error "--extended-lambda defines __CUDACC_EXTENDED_LAMBDA__ for nvcc"
#endif
#ifndef _OPENMP
#error "-Xcompiler=-fopenmp defines _OPENMP for nvcc's host compiler"
#endif

__global__ void scaleStrided(float* a) {
  a[threadIdx.x * SCALE_STRIDE] = twice(a[threadIdx.x * SCALE_STRIDE]);  // expect: uncoalesced-access
}

__global__ void scaleCoalesced(float* a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = twice(a[i]);
}

void launch(float* a) {
  scaleStrided<<<1, 256>>>(a);
  scaleCoalesced<<<4, 256>>>(a);
}
