#include "kernels.cu"
void run(float* d) {
  rows<<<1, dim3(96, 2)>>>(d);
  rowsPitch64<<<1, dim3(96, 2)>>>(d);
}
