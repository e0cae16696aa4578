// The fixed twin of stream_upload.cu: pinned buffers, one batched upload, one batched download.
#include <cstdio>

__global__ void brighten(float* frames, size_t total, float gain) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total; i += size_t(blockDim.x) * gridDim.x)
    frames[i] = frames[i] * gain;
}

int main() {
  const int frames = 240, n = 1920 * 1080;
  const size_t total = size_t(frames) * n;
  float* video = nullptr;
  float* result = nullptr;
  cudaMallocHost(&video, total * sizeof(float));   // pinned
  cudaMallocHost(&result, total * sizeof(float));  // pinned
  for (size_t i = 0; i < total; ++i) video[i] = 0.5f;
  float* dFrames = nullptr;
  cudaMalloc(&dFrames, total * sizeof(float));
  cudaMemcpy(dFrames, video, total * sizeof(float), cudaMemcpyHostToDevice);
  brighten<<<132 * 8, 256>>>(dFrames, total, 1.1f);
  cudaMemcpy(result, dFrames, total * sizeof(float), cudaMemcpyDeviceToHost);
  printf("%f\n", result[0]);
  cudaFree(dFrames);
  cudaFreeHost(video);
  cudaFreeHost(result);
  return 0;
}
