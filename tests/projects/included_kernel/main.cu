// Project fixture: a kernel file that only compiles inside the file that includes it (Rodinia's
// bfs, backprop, b+tree: kernel.cu uses the includer's types and macros).
#include <cuda_runtime.h>
#include <stdio.h>

#define BLOCK 64
struct Node {
  int start;
  int degree;
};

#include "kernel.cu"

int main() {
  const int n = 1 << 16;
  Node* nodes = 0;
  int* cost = 0;
  cudaMalloc(&nodes, n * sizeof(Node));
  cudaMalloc(&cost, n * sizeof(int));
  relax<<<n / BLOCK, BLOCK>>>(nodes, cost, n);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
