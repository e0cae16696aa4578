// Does not compile alone: the precision comes from the file that includes it (test_train.cu), as
// llm.c's test_gpt2.cu includes train_gpt2.cu.
#include "llmc/layer.cuh"
typedef PRECISION floatX;

__global__ void residual(floatX* out, const floatX* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i * 4] = a[i];  // expect: uncoalesced-access
}

void step(float* out, const float* in) {
  layerForward<<<4, 128>>>(out, in, 64);
  layerScale<<<4, 128>>>(out, 0.5f);
  residual<<<4, 128>>>((floatX*)out, (const floatX*)in, 512);
}
