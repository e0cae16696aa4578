// Compiles only inside main.cu (Scale comes from there); includes util.cuh itself.
#pragma once
#include "util.cuh"  // expect: compile-error
__global__ void scale(float* a) {
  a[threadIdx.x * 32] *= Scale;  // expect: uncoalesced-access
}
