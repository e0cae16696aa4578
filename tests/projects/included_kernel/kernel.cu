// Included by main.cu: Node and BLOCK come from there.
__global__ void relax(const Node* nodes, int* cost, int n) {
  __shared__ int tile[BLOCK][BLOCK];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n) return;
  tile[threadIdx.x][0] = nodes[i].degree + nodes[i].start;  // expect: bank-conflict
  __syncthreads();
  cost[i * 8] = tile[threadIdx.x][0];  // expect: uncoalesced-access, bank-conflict
}
