// Host-side transfer demos: unbatched-memcpy (many small pinned copies vs one), serialized-transfers
// (a chunked pipeline over 4 streams vs the serial loop) and alloc-in-loop (cudaMalloc/cudaFree per
// iteration vs one allocation vs cudaMallocAsync from a pool).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "kernels/harness.cuh"

namespace gpuopt::demos {

namespace {

const char* mib(size_t b, char* buf, size_t n) {
  if (b >= (size_t(1) << 20)) snprintf(buf, n, "%zu MiB", b >> 20);
  else snprintf(buf, n, "%zu KiB", b >> 10);
  return buf;
}

}  // namespace

// ---- unbatched-memcpy -------------------------------------------------------------------------

std::vector<Report> demoUnbatched() {
  const size_t bytes = size_t(16) << 20;
  requireMemory(bytes);
  char* src = nullptr;  // pinned: the batching effect alone, without pageable staging
  char* dst = nullptr;
  GPUOPT_CHECK(cudaMallocHost(&src, bytes));
  GPUOPT_CHECK(cudaMallocHost(&dst, bytes));
  auto ref = randomInts(bytes / sizeof(int), 29);
  std::memcpy(src, ref.data(), bytes);
  DeviceBuffer<char> dev(bytes);
  cudaStream_t stream;
  GPUOPT_CHECK(cudaStreamCreate(&stream));

  Report up;
  up.demo = "unbatched-memcpy";
  up.title = "host to device from pinned memory: 16 MiB in one copy against the same bytes in many small copies";
  up.size = "16 MiB pinned, chunk sizes 4 KiB .. 1 MiB";
  up.finding = "unbatched-memcpy: \"cudaMemcpy in a loop copies 4 KiB host to device on each of 4096 iterations\"";
  auto addUp = [&](const std::string& name, size_t chunk, bool async, bool fixed, const std::string& note) {
    progress("unbatched-memcpy", name);
    Row r;
    r.variant = name;
    const size_t n = bytes / chunk;
    r.t = timeIt(
        [&] {
          for (size_t c = 0; c < n; ++c) {
            if (async) GPUOPT_CHECK(cudaMemcpyAsync(dev.p + c * chunk, src + c * chunk, chunk, cudaMemcpyHostToDevice, stream));
            else GPUOPT_CHECK(cudaMemcpy(dev.p + c * chunk, src + c * chunk, chunk, cudaMemcpyHostToDevice));
          }
          if (async) GPUOPT_CHECK(cudaStreamSynchronize(stream));
        },
        [&] { dev.poison(); }, 20);
    auto back = dev.download();
    r.correct = std::memcmp(back.data(), src, bytes) == 0;
    r.gbs = bytes / (r.t.medianMs * 1e-3) / 1e9;
    r.isFixed = fixed;
    r.note = note;
    up.rows.push_back(r);
  };
  addUp("1 x 16 MiB cudaMemcpy", bytes, false, true, "one batched copy");
  addUp("4096 x 4 KiB cudaMemcpy", size_t(4) << 10, false, false, "the flagged pattern");
  addUp("4096 x 4 KiB cudaMemcpyAsync", size_t(4) << 10, true, false, "one stream, one sync at the end");
  for (size_t chunk : {size_t(16) << 10, size_t(64) << 10, size_t(80) << 10, size_t(256) << 10, size_t(1) << 20}) {
    if (bytes % chunk) continue;
    char name[64], b[16];
    snprintf(name, sizeof name, "%zu x %s cudaMemcpy", bytes / chunk, mib(chunk, b, sizeof b));
    addUp(name, chunk, false, false, "chunk-size sweep");
  }
  double perCopyUs = (up.rows[1].t.medianMs - up.rows[0].t.medianMs) / 4095.0 * 1e3;
  char buf[320];
  snprintf(buf, sizeof buf,
           "4096 pinned 4 KiB copies: %.1fx one 16 MiB copy (%.2f us per copy: %.2f us of fixed cost beyond the bytes); "
           "cudaMemcpyAsync on one stream: %.1fx",
           slowdown(up, up.rows[1]), up.rows[1].t.medianMs * 1e3 / 4096, perCopyUs, slowdown(up, up.rows[2]));
  up.verdicts.push_back(buf);
  up.remarks.push_back("the sweep shows where a copy stops being latency-bound: the rule's threshold is 80 KiB (lecture 003)");

  Report down;
  down.demo = "unbatched-memcpy";
  down.title = "device to host into pinned memory: one copy against 4096 small copies";
  down.size = "16 MiB pinned, 4096 x 4 KiB";
  down.finding = "unbatched-memcpy: \"cudaMemcpy in a loop copies 4 bytes device to host\"";
  GPUOPT_CHECK(cudaMemcpy(dev.p, src, bytes, cudaMemcpyHostToDevice));
  auto addDown = [&](const std::string& name, size_t chunk, bool fixed, const std::string& note) {
    progress("unbatched-memcpy", name);
    Row r;
    r.variant = name;
    const size_t n = bytes / chunk;
    r.t = timeIt(
        [&] {
          for (size_t c = 0; c < n; ++c)
            GPUOPT_CHECK(cudaMemcpy(dst + c * chunk, dev.p + c * chunk, chunk, cudaMemcpyDeviceToHost));
        },
        [&] { std::memset(dst, 0xFF, bytes); }, 20);
    r.correct = std::memcmp(dst, src, bytes) == 0;
    r.gbs = bytes / (r.t.medianMs * 1e-3) / 1e9;
    r.isFixed = fixed;
    r.note = note;
    down.rows.push_back(r);
  };
  addDown("1 x 16 MiB cudaMemcpy", bytes, true, "one batched copy");
  addDown("4096 x 4 KiB cudaMemcpy", size_t(4) << 10, false, "the flagged pattern");
  snprintf(buf, sizeof buf, "4096 pinned 4 KiB copies back: %.1fx one 16 MiB copy", slowdown(down, down.rows[1]));
  down.verdicts.push_back(buf);
  cudaStreamDestroy(stream);
  cudaFreeHost(src);
  cudaFreeHost(dst);
  return {up, down};
}

// ---- serialized-transfers ---------------------------------------------------------------------

namespace {
__global__ void burn(const float* __restrict__ in, float* __restrict__ out, size_t n, int iters) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float x = in[i];
  for (int k = 0; k < iters; ++k) x = __fmaf_rn(x, 0.999f, 0.001f);
  out[i] = x;
}

float burnRef(float x, int iters) {
  for (int k = 0; k < iters; ++k) x = std::fmaf(x, 0.999f, 0.001f);
  return x;
}
}  // namespace

std::vector<Report> demoSerialized() {
  const size_t n = size_t(32) << 20, bytes = n * sizeof(float);  // 128 MiB each way
  const int nStreams = 4, nChunks = 16;
  const size_t chunk = n / nChunks, chunkBytes = chunk * sizeof(float);
  requireMemory(2 * bytes);
  cudaDeviceProp prop{};
  GPUOPT_CHECK(cudaGetDeviceProperties(&prop, 0));
  float *hin = nullptr, *hout = nullptr;
  GPUOPT_CHECK(cudaMallocHost(&hin, bytes));
  GPUOPT_CHECK(cudaMallocHost(&hout, bytes));
  auto input = randomFloats(n, 31);
  std::memcpy(hin, input.data(), bytes);
  DeviceBuffer<float> din(n), dout(n);
  cudaStream_t streams[nStreams];
  for (auto& s : streams) GPUOPT_CHECK(cudaStreamCreate(&s));
  const int block = 256;
  auto grid = [&](size_t count) { return unsigned((count + block - 1) / block); };

  // Calibrate the kernel to take about as long as one direction of the copy.
  GPUOPT_CHECK(cudaMemcpy(din.p, hin, bytes, cudaMemcpyHostToDevice));
  Timing h2d = timeIt([&] { GPUOPT_CHECK(cudaMemcpy(din.p, hin, bytes, cudaMemcpyHostToDevice)); }, {}, 10);
  Timing k64 = timeIt([&] { burn<<<grid(n), block>>>(din.p, dout.p, n, 64); }, {}, 10);
  int iters = int(std::lround(64.0 * h2d.medianMs / std::max(k64.medianMs, 1e-3)));
  iters = std::max(16, std::min(iters, 20000));

  Report rep;
  rep.demo = "serialized-transfers";
  rep.title = "copy in, kernel, copy out: serial on the default stream against 16 chunks over 4 streams";
  char sz[200];
  snprintf(sz, sizeof sz, "128 MiB in and out (pinned), kernel of %d dependent FMAs per element (about one copy's time); "
           "%d chunks of 8 MiB over %d streams", iters, nChunks, nStreams);
  rep.size = sz;
  rep.finding = "serialized-transfers: \"loop copies to the device, launches 'burn' and copies back with blocking cudaMemcpy\"";

  std::vector<float> serialOut;
  auto verify = [&](Row& r) {
    if (serialOut.empty()) {
      // The reference run: every 97th element against the CPU (the same fused multiply-adds).
      serialOut.assign(hout, hout + n);
      for (size_t i = 0; i < n; i += 97)
        if (serialOut[i] != burnRef(input[i], iters)) {
          r.correct = false;
          return;
        }
      r.correct = true;
      return;
    }
    r.correct = std::memcmp(hout, serialOut.data(), bytes) == 0;  // bit for bit the serial result
  };
  auto add = [&](const std::string& name, auto fn, bool fixed, bool check, const std::string& note) {
    progress("serialized-transfers", name);
    Row r;
    r.variant = name;
    r.t = timeIt(fn, [&] {
      dout.poison();
      std::memset(hout, 0xFF, bytes);
    }, 20);
    if (check) verify(r);
    r.gbs = 2.0 * bytes / (r.t.medianMs * 1e-3) / 1e9;
    r.isFixed = fixed;
    r.note = note;
    rep.rows.push_back(r);
  };
  add("serial: 1 in, 1 kernel, 1 out", [&] {
        GPUOPT_CHECK(cudaMemcpy(din.p, hin, bytes, cudaMemcpyHostToDevice));
        burn<<<grid(n), block>>>(din.p, dout.p, n, iters);
        GPUOPT_CHECK(cudaMemcpy(hout, dout.p, bytes, cudaMemcpyDeviceToHost));
      }, false, true, "reference result (CPU-checked sample)");
  add("serial loop: 16 chunks, cudaMemcpy", [&] {
        for (int c = 0; c < nChunks; ++c) {
          size_t off = c * chunk;
          GPUOPT_CHECK(cudaMemcpy(din.p + off, hin + off, chunkBytes, cudaMemcpyHostToDevice));
          burn<<<grid(chunk), block>>>(din.p + off, dout.p + off, chunk, iters);
          GPUOPT_CHECK(cudaMemcpy(hout + off, dout.p + off, chunkBytes, cudaMemcpyDeviceToHost));
        }
      }, false, true, "the flagged pattern");
  add("4 streams, per chunk in/kernel/out", [&] {
        for (int c = 0; c < nChunks; ++c) {
          size_t off = c * chunk;
          cudaStream_t s = streams[c % nStreams];
          GPUOPT_CHECK(cudaMemcpyAsync(din.p + off, hin + off, chunkBytes, cudaMemcpyHostToDevice, s));
          burn<<<grid(chunk), block, 0, s>>>(din.p + off, dout.p + off, chunk, iters);
          GPUOPT_CHECK(cudaMemcpyAsync(hout + off, dout.p + off, chunkBytes, cudaMemcpyDeviceToHost, s));
        }
      }, true, true, "lecture 000 2.4, version 1");
  add("4 streams, all in/all kernels/all out", [&] {
        for (int c = 0; c < nChunks; ++c)
          GPUOPT_CHECK(cudaMemcpyAsync(din.p + c * chunk, hin + c * chunk, chunkBytes, cudaMemcpyHostToDevice,
                                       streams[c % nStreams]));
        for (int c = 0; c < nChunks; ++c)
          burn<<<grid(chunk), block, 0, streams[c % nStreams]>>>(din.p + c * chunk, dout.p + c * chunk, chunk, iters);
        for (int c = 0; c < nChunks; ++c)
          GPUOPT_CHECK(cudaMemcpyAsync(hout + c * chunk, dout.p + c * chunk, chunkBytes, cudaMemcpyDeviceToHost,
                                       streams[c % nStreams]));
      }, false, true, "lecture 000 2.4, version 2");
  // The stages alone (for the overlap figure).
  add("stage: copy in alone", [&] { GPUOPT_CHECK(cudaMemcpy(din.p, hin, bytes, cudaMemcpyHostToDevice)); }, false, false,
      "stage");
  add("stage: kernel alone", [&] { burn<<<grid(n), block>>>(din.p, dout.p, n, iters); }, false, false, "stage");
  add("stage: copy out alone", [&] { GPUOPT_CHECK(cudaMemcpy(hout, dout.p, bytes, cudaMemcpyDeviceToHost)); }, false,
      false, "stage");
  double tin = rep.rows[4].t.medianMs, tk = rep.rows[5].t.medianMs, tout = rep.rows[6].t.medianMs;
  double serial = rep.rows[1].t.medianMs, piped = rep.rows[2].t.medianMs;
  double longest = std::max(tin, std::max(tk, tout));
  double overlap = serial > longest ? (serial - piped) / (serial - longest) : 0;
  char buf[400];
  snprintf(buf, sizeof buf,
           "serial loop %.1fx slower than the 4-stream pipeline; overlap achieved: %.0f%% of the hideable time (serial "
           "%.2f ms, pipelined %.2f ms, longest stage %.2f ms, stages sum %.2f ms); copy engines "
           "(asyncEngineCount): %d",
           serial / piped, 100 * overlap, serial, piped, longest, tin + tk + tout, prop.asyncEngineCount);
  rep.verdicts.push_back(buf);
  rep.remarks.push_back("GB/s counts the bytes moved both ways; stage rows are the three steps timed alone");
  for (auto& s : streams) cudaStreamDestroy(s);
  cudaFreeHost(hin);
  cudaFreeHost(hout);
  return {rep};
}

// ---- alloc-in-loop ----------------------------------------------------------------------------

namespace {
__global__ void stamp(int* buf, size_t n, int it) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) buf[i] = int(i) ^ it;
}
__global__ void takeLast(const int* buf, size_t n, int* out, int it) { out[it] = buf[n - 1] + buf[0]; }
}  // namespace

std::vector<Report> demoAllocInLoop() {
  const int iterations = 200;
  const size_t n = size_t(1) << 20, bytes = n * sizeof(int);  // 4 MiB per allocation
  requireMemory(4 * bytes);
  DeviceBuffer<int> out(iterations);
  cudaStream_t stream = 0;  // the legacy default stream: the events of the harness see all of it
  auto expect = [&](int it) { return (int(n - 1) ^ it) + (0 ^ it); };
  auto checkOut = [&](Row& r) {
    auto v = out.download();
    r.correct = true;
    for (int it = 0; it < iterations; ++it)
      if (v[it] != expect(it)) r.correct = false;
  };
  const unsigned grid = unsigned(n / 256);

  Report rep;
  rep.demo = "alloc-in-loop";
  rep.title = "a scratch buffer per iteration: cudaMalloc/cudaFree each time vs one allocation vs cudaMallocAsync";
  rep.size = "200 iterations, 4 MiB scratch buffer, two small kernels per iteration";
  rep.finding = "alloc-in-loop: \"cudaMalloc and cudaFree of 'd' in each of 200 iterations of this loop\"";
  auto add = [&](const std::string& name, auto fn, bool fixed, const std::string& note, int reps = 20) {
    progress("alloc-in-loop", name);
    Row r;
    r.variant = name;
    r.t = timeIt(fn, [&] { out.poison(); }, reps);
    checkOut(r);
    r.isFixed = fixed;
    r.note = note;
    rep.rows.push_back(r);
  };
  int* once = nullptr;
  GPUOPT_CHECK(cudaMalloc(&once, bytes));
  add("one cudaMalloc before the loop", [&] {
        for (int it = 0; it < iterations; ++it) {
          stamp<<<grid, 256>>>(once, n, it);
          takeLast<<<1, 1>>>(once, n, out.p, it);
        }
      }, true, "the fix");
  add("cudaMalloc + cudaFree per iteration", [&] {
        for (int it = 0; it < iterations; ++it) {
          int* d = nullptr;
          GPUOPT_CHECK(cudaMalloc(&d, bytes));
          stamp<<<grid, 256>>>(d, n, it);
          takeLast<<<1, 1>>>(d, n, out.p, it);
          GPUOPT_CHECK(cudaFree(d));
        }
      }, false, "the flagged pattern");
  cudaMemPool_t pool;
  GPUOPT_CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  uint64_t keep = UINT64_MAX;
  GPUOPT_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  add("cudaMallocAsync + cudaFreeAsync (pool)", [&] {
        for (int it = 0; it < iterations; ++it) {
          int* d = nullptr;
          GPUOPT_CHECK(cudaMallocAsync(&d, bytes, stream));
          stamp<<<grid, 256, 0, stream>>>(d, n, it);
          takeLast<<<1, 1, 0, stream>>>(d, n, out.p, it);
          GPUOPT_CHECK(cudaFreeAsync(d, stream));
        }
      }, false, "default pool, release threshold kept high");
  // Pinned host buffers: cudaMallocHost per iteration against one pinned buffer.
  int* pinnedOnce = nullptr;
  GPUOPT_CHECK(cudaMallocHost(&pinnedOnce, bytes));
  std::vector<int> last(iterations);
  auto checkLast = [&](Row& r) {
    r.correct = true;
    for (int it = 0; it < iterations; ++it)
      if (last[it] != (int(n - 1) ^ it)) r.correct = false;
  };
  auto addHost = [&](const std::string& name, auto fn, const std::string& note) {
    progress("alloc-in-loop", name);
    Row r;
    r.variant = name;
    r.t = timeIt(fn, [&] { std::fill(last.begin(), last.end(), -1); }, 10);
    checkLast(r);
    r.note = note;
    rep.rows.push_back(r);
  };
  addHost("pinned: one cudaMallocHost", [&] {
        for (int it = 0; it < iterations; ++it) {
          stamp<<<grid, 256>>>(once, n, it);
          GPUOPT_CHECK(cudaMemcpy(pinnedOnce, once, bytes, cudaMemcpyDeviceToHost));
          last[it] = pinnedOnce[n - 1];
        }
      }, "reference for the next row");
  addHost("pinned: cudaMallocHost + cudaFreeHost per iteration", [&] {
        for (int it = 0; it < iterations; ++it) {
          int* h = nullptr;
          GPUOPT_CHECK(cudaMallocHost(&h, bytes));
          stamp<<<grid, 256>>>(once, n, it);
          GPUOPT_CHECK(cudaMemcpy(h, once, bytes, cudaMemcpyDeviceToHost));
          last[it] = h[n - 1];
          GPUOPT_CHECK(cudaFreeHost(h));
        }
      }, "the flagged pattern, pinned");
  char buf[400];
  double per = (rep.rows[1].t.medianMs - rep.rows[0].t.medianMs) / iterations * 1e3;
  double perHost = (rep.rows[4].t.medianMs - rep.rows[3].t.medianMs) / iterations * 1e3;
  snprintf(buf, sizeof buf,
           "cudaMalloc/cudaFree per iteration: %.1fx one allocation (%.0f us per pair); cudaMallocAsync from the pool: "
           "%.2fx; cudaMallocHost/cudaFreeHost per iteration: %.1fx one pinned buffer (%.0f us per pair)",
           slowdown(rep, rep.rows[1]), per, slowdown(rep, rep.rows[2]), rep.rows[4].t.medianMs / rep.rows[3].t.medianMs,
           perHost);
  rep.verdicts.push_back(buf);
  rep.remarks.push_back("the last two rows compare with each other (vs fixed is against the device-only loop)");
  cudaFree(once);
  cudaFreeHost(pinnedOnce);
  return {rep};
}

}  // namespace gpuopt::demos
