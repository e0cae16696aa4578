// A host program that streams frames to the GPU, one small pageable copy per frame.
// Lint it: gpuopt-lint samples/stream_upload.cu   (fixed twin: stream_upload_fixed.cu)
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void brighten(float* frame, int n, float gain) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) frame[i] = frame[i] * gain;
}

static void uploadFrame(float* dFrame, const float* hFrame, int n) {
  cudaMemcpy(dFrame, hFrame, n * sizeof(float), cudaMemcpyHostToDevice);
}

int main() {
  const int frames = 240, n = 1920 * 1080;
  std::vector<float> video(size_t(frames) * n, 0.5f);   // pageable
  float* result = (float*)malloc(size_t(n) * sizeof(float));  // pageable
  float* dFrame = nullptr;
  cudaMalloc(&dFrame, size_t(n) * sizeof(float));
  for (int f = 0; f < frames; ++f) {
    uploadFrame(dFrame, video.data() + size_t(f) * n, n);
    brighten<<<(n + 255) / 256, 256>>>(dFrame, n, 1.1f);
    cudaMemcpy(result, dFrame, n * sizeof(float), cudaMemcpyDeviceToHost);
  }
  printf("%f\n", result[0]);
  cudaFree(dFrame);
  free(result);
  return 0;
}
