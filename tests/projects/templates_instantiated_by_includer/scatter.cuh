// A header of kernel templates that compiles alone but instantiates nothing: linted as an input,
// its kernels are analysed through the unit that includes and launches them (codec.cu), with the
// template arguments and block shapes that unit gives.
#pragma once
template <typename T>
__global__ void scatterBlocks(const T* in, T* out, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i * 16] = in[i];  // expect: uncoalesced-access
}
