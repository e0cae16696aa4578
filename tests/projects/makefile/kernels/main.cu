// dfloat and STRIDE come from the Makefile one folder up; config.h from its -I.
#include "config.h"

__global__ void scale(real_t* a) {
  a[threadIdx.x * STRIDE] *= 2.0f;  // expect: uncoalesced-access
}

int main() {
  real_t* d = 0;
  cudaMalloc(&d, 1 << 20);
  scale<<<1, 128>>>(d);
  return 0;
}
