// Stencils, convolutions and image kernels written the way projects write them (our own code):
// issue 28's per-line cost estimate is checked against these kernels' Nsight Compute counters.
// Build: nvcc -lineinfo -arch=sm_90 -o stencil stencil.cu
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                    \
  do {                                                                              \
    cudaError_t err_ = (x);                                                         \
    if (err_ != cudaSuccess) {                                                      \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

// Jacobi sweep of the 2-D Laplace equation, straight from global memory.
__global__ void jacobi2d(const float* __restrict__ u, float* __restrict__ unew, int nx, int ny) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1) {
    int c = j * nx + i;
    unew[c] = 0.25f * (u[c - 1] + u[c + 1] + u[c - nx] + u[c + nx]);
  }
}

// 7-point 3-D stencil: 2-D shared tile in x-y, marching along z with the z neighbours in registers.
#define BX 32
#define BY 8
__global__ void stencil3d7pt(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz,
                             float c0, float c1) {
  __shared__ float tile[BY + 2][BX + 2];
  int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y;
  int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
  size_t plane = (size_t)nx * ny;
  bool inside = i > 0 && i < nx - 1 && j > 0 && j < ny - 1;
  size_t idx = (size_t)j * nx + i;
  float below = in[idx], cur = in[idx + plane], above;
  for (int k = 1; k < nz - 1; ++k) {
    above = in[idx + (k + 1) * plane];
    tile[ty][tx] = cur;
    if (threadIdx.x == 0 && i > 0) tile[ty][0] = in[idx + k * plane - 1];
    if (threadIdx.x == BX - 1 && i < nx - 1) tile[ty][BX + 1] = in[idx + k * plane + 1];
    if (threadIdx.y == 0 && j > 0) tile[0][tx] = in[idx + k * plane - nx];
    if (threadIdx.y == BY - 1 && j < ny - 1) tile[BY + 1][tx] = in[idx + k * plane + nx];
    __syncthreads();
    if (inside)
      out[idx + k * plane] = c0 * cur + c1 * (tile[ty][tx - 1] + tile[ty][tx + 1] + tile[ty - 1][tx] +
                                              tile[ty + 1][tx] + below + above);
    __syncthreads();
    below = cur;
    cur = above;
  }
}

// Direct 2-D convolution with the filter in constant memory (odd radius), clamped borders.
#define RADIUS 3
__constant__ float cFilter[(2 * RADIUS + 1) * (2 * RADIUS + 1)];
__global__ void conv2dConstant(const float* __restrict__ img, float* __restrict__ out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float sum = 0.0f;
  for (int dy = -RADIUS; dy <= RADIUS; ++dy)
    for (int dx = -RADIUS; dx <= RADIUS; ++dx) {
      int xx = min(max(x + dx, 0), w - 1), yy = min(max(y + dy, 0), h - 1);
      sum += img[yy * w + xx] * cFilter[(dy + RADIUS) * (2 * RADIUS + 1) + dx + RADIUS];
    }
  out[y * w + x] = sum;
}

// NCHW 2x2 max pooling, stride 2.
__global__ void maxPool2x2(const float* __restrict__ in, float* __restrict__ out, int C, int H, int W) {
  int ow = W / 2, oh = H / 2;
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= C * oh * ow) return;
  int x = idx % ow, y = (idx / ow) % oh, c = idx / (ow * oh);
  const float* p = in + ((size_t)c * H + 2 * y) * W + 2 * x;
  out[idx] = fmaxf(fmaxf(p[0], p[1]), fmaxf(p[W], p[W + 1]));
}

// im2col for a 3x3 convolution, stride 1, pad 1: one thread per (channel, output pixel).
__global__ void im2col3x3(const float* __restrict__ im, float* __restrict__ col, int C, int H, int W) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= C * H * W) return;
  int x = idx % W, y = (idx / W) % H, c = idx / (H * W);
  for (int ky = 0; ky < 3; ++ky)
    for (int kx = 0; kx < 3; ++kx) {
      int iy = y + ky - 1, ix = x + kx - 1;
      float v = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? im[((size_t)c * H + iy) * W + ix] : 0.0f;
      col[((size_t)(c * 9 + ky * 3 + kx) * H + y) * W + x] = v;
    }
}

// Bilinear upsampling by 2 (image resize), one thread per output pixel, RGB interleaved.
__global__ void resizeBilinearRGB(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, int w,
                                  int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  int W = 2 * w, H = 2 * h;
  if (x >= W || y >= H) return;
  float fx = (x + 0.5f) * 0.5f - 0.5f, fy = (y + 0.5f) * 0.5f - 0.5f;
  int x0 = max(int(floorf(fx)), 0), y0 = max(int(floorf(fy)), 0);
  int x1 = min(x0 + 1, w - 1), y1 = min(y0 + 1, h - 1);
  float ax = fx - x0, ay = fy - y0;
  for (int ch = 0; ch < 3; ++ch) {
    float top = src[(y0 * w + x0) * 3 + ch] * (1 - ax) + src[(y0 * w + x1) * 3 + ch] * ax;
    float bot = src[(y1 * w + x0) * 3 + ch] * (1 - ax) + src[(y1 * w + x1) * 3 + ch] * ax;
    dst[(y * W + x) * 3 + ch] = (unsigned char)(top * (1 - ay) + bot * ay + 0.5f);
  }
}

int main() {
  const int nx = 4096, ny = 4096;
  std::vector<float> h(size_t(nx) * ny);
  srand(3);
  for (auto& v : h) v = float(rand() % 1000) / 1000.0f;
  float *u, *v;
  CHECK(cudaMalloc(&u, sizeof(float) * h.size()));
  CHECK(cudaMalloc(&v, sizeof(float) * h.size() * 9));
  CHECK(cudaMemcpy(u, h.data(), sizeof(float) * h.size(), cudaMemcpyHostToDevice));
  jacobi2d<<<dim3(nx / 32, ny / 8), dim3(32, 8)>>>(u, v, nx, ny);
  const int n3 = 256;
  stencil3d7pt<<<dim3(n3 / BX, n3 / BY), dim3(BX, BY)>>>(u, v, n3, n3, n3, 0.4f, 0.1f);
  std::vector<float> f((2 * RADIUS + 1) * (2 * RADIUS + 1), 1.0f / 49);
  CHECK(cudaMemcpyToSymbol(cFilter, f.data(), sizeof(float) * f.size()));
  conv2dConstant<<<dim3(2048 / 16, 2048 / 16), dim3(16, 16)>>>(u, v, 2048, 2048);
  const int C = 64, H = 256, W = 256;
  maxPool2x2<<<C * H * W / 4 / 256, 256>>>(u, v, C, H, W);
  im2col3x3<<<(16 * 128 * 128) / 256, 256>>>(u, v, 16, 128, 128);
  unsigned char *s8, *d8;
  CHECK(cudaMalloc(&s8, 1024 * 1024 * 3));
  CHECK(cudaMalloc(&d8, 2048 * 2048 * 3));
  CHECK(cudaMemset(s8, 7, 1024 * 1024 * 3));
  resizeBilinearRGB<<<dim3(2048 / 32, 2048 / 8), dim3(32, 8)>>>(s8, d8, 1024, 1024);
  CHECK(cudaDeviceSynchronize());
  printf("stencil: ok\n");
  return 0;
}
