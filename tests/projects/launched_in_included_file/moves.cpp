#include "kernels.cu"
void run(int* d, const int* in, int n) {
  slots<<<n, BLOCK>>>(d);
  flag<<<n, BLOCK>>>(in, d);
}
