// pageable-memcpy: pageable vs pinned host memory, many small copies vs one batched copy.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "kernels/harness.cuh"

namespace gpuopt::demos {

namespace {
// Keeps the stream busy for about `ns` nanoseconds (one thread).
__global__ void busyFor(unsigned long long ns) {
  const unsigned long long start = clock64();
  // clock64 counts SM cycles: about 1.7-2 GHz on an H100; the figure only needs "a few ms".
  while (clock64() - start < ns * 2) {
  }
}

std::string sizeText(size_t bytes) {
  if (bytes >= (size_t(1) << 20)) return std::to_string(bytes >> 20) + " MiB";
  return bytes >= 1024 ? std::to_string(bytes >> 10) + " KiB" : std::to_string(bytes) + " B";
}
}  // namespace

std::vector<Report> demoPageable() {
  Report rep;
  rep.demo = "pageable-memcpy";
  rep.title = "host<->device copies: pageable vs pinned; 4096 small copies vs one batched copy";
  const size_t bytes = size_t(256) << 20, chunk = size_t(64) << 10, chunks = bytes / chunk;
  rep.size = "256 MiB each way; small copies: 4096 x 64 KiB";
  rep.finding = "pageable-memcpy: \"cudaMemcpy in a loop copies pageable host memory\"";
  requireMemory(bytes);
  char* pageable = static_cast<char*>(std::malloc(bytes));
  if (!pageable) throw DemoError(kNoMemory, "cannot allocate 256 MiB of host memory");
  char* pinned = nullptr;
  GPUOPT_CHECK(cudaMallocHost(&pinned, bytes));
  auto src = randomInts(bytes / sizeof(int), 17);
  std::memcpy(pageable, src.data(), bytes);
  std::memcpy(pinned, src.data(), bytes);
  DeviceBuffer<char> dev(bytes);
  auto checkDevice = [&](Row& r) {
    auto back = dev.download();
    r.correct = std::memcmp(back.data(), src.data(), bytes) == 0;
  };
  auto add = [&](const std::string& name, auto fn, bool h2d, bool fixed, const std::string& note) {
    progress("pageable-memcpy", name);
    Row r;
    r.variant = name;
    r.t = timeIt(fn, h2d ? std::function<void()>([&] { dev.poison(); }) : std::function<void()>(), 20);
    if (h2d) {
      checkDevice(r);
    } else {
      r.correct = std::memcmp(fixed ? pinned : pageable, src.data(), bytes) == 0;
    }
    r.gbs = bytes / (r.t.medianMs * 1e-3) / 1e9;
    r.isFixed = fixed;
    r.note = note;
    rep.rows.push_back(r);
  };
  add("H2D 256 MiB pinned", [&] { GPUOPT_CHECK(cudaMemcpy(dev.p, pinned, bytes, cudaMemcpyHostToDevice)); }, true, true,
      "one copy, page-locked");
  add("H2D 256 MiB pageable", [&] { GPUOPT_CHECK(cudaMemcpy(dev.p, pageable, bytes, cudaMemcpyHostToDevice)); }, true,
      false, "staged through a bounce buffer");
  add("H2D 4096 x 64 KiB pageable (loop)", [&] {
        for (size_t c = 0; c < chunks; ++c)
          GPUOPT_CHECK(cudaMemcpy(dev.p + c * chunk, pageable + c * chunk, chunk, cudaMemcpyHostToDevice));
      }, true, false, "the flagged pattern");
  add("H2D 4096 x 64 KiB pinned (loop)", [&] {
        for (size_t c = 0; c < chunks; ++c)
          GPUOPT_CHECK(cudaMemcpy(dev.p + c * chunk, pinned + c * chunk, chunk, cudaMemcpyHostToDevice));
      }, true, false, "pinned, not batched");
  // Device -> host.
  GPUOPT_CHECK(cudaMemcpy(dev.p, pinned, bytes, cudaMemcpyHostToDevice));
  add("D2H 256 MiB pageable", [&] { GPUOPT_CHECK(cudaMemcpy(pageable, dev.p, bytes, cudaMemcpyDeviceToHost)); }, false,
      false, "staged through a bounce buffer");
  add("D2H 256 MiB pinned", [&] { GPUOPT_CHECK(cudaMemcpy(pinned, dev.p, bytes, cudaMemcpyDeviceToHost)); }, false, false,
      "one copy, page-locked");
  // Small copies (a scalar result, a few parameters, one row) repeated 4096 times: does pinning
  // still pay when the copy is latency, not bandwidth? Each size pageable and pinned, side by side.
  const size_t smallCount = 4096;
  std::vector<std::pair<size_t, std::pair<double, double>>> smallRatios;
  for (size_t sz : {size_t(4), size_t(1) << 10, size_t(16) << 10}) {
    double ms[2] = {0, 0};
    for (int pin = 0; pin < 2; ++pin) {
      char* h = pin ? pinned : pageable;
      Row r;
      r.variant = sizeText(sz) + (pin ? " H2D x 4096 pinned" : " H2D x 4096 pageable");
      progress("pageable-memcpy", r.variant);
      r.t = timeIt([&] {
            for (size_t c = 0; c < smallCount; ++c)
              GPUOPT_CHECK(cudaMemcpy(dev.p + c * sz, h + c * sz, sz, cudaMemcpyHostToDevice));
          }, [&] { dev.poison(); }, 20);
      auto back = dev.download();
      r.correct = std::memcmp(back.data(), src.data(), sz * smallCount) == 0;
      r.gbs = sz * smallCount / (r.t.medianMs * 1e-3) / 1e9;
      r.note = "small copies in a loop";
      ms[pin] = r.t.medianMs;
      rep.rows.push_back(r);
    }
    // The scalar read back after every step (a flag, a loss): device to host.
    smallRatios.push_back({sz, {ms[0], ms[1]}});
  }
  {
    GPUOPT_CHECK(cudaMemcpy(dev.p, pinned, bytes, cudaMemcpyHostToDevice));
    double ms[2] = {0, 0};
    for (int pin = 0; pin < 2; ++pin) {
      char* h = pin ? pinned : pageable;
      Row r;
      r.variant = pin ? "4 B D2H x 4096 pinned" : "4 B D2H x 4096 pageable";
      progress("pageable-memcpy", r.variant);
      std::memset(h, 0, 4 * smallCount);
      r.t = timeIt([&] {
            for (size_t c = 0; c < smallCount; ++c)
              GPUOPT_CHECK(cudaMemcpy(h + c * 4, dev.p + c * 4, 4, cudaMemcpyDeviceToHost));
          }, std::function<void()>(), 20);
      r.correct = std::memcmp(h, src.data(), 4 * smallCount) == 0;
      std::memcpy(h, src.data(), 4 * smallCount);
      r.gbs = 4.0 * smallCount / (r.t.medianMs * 1e-3) / 1e9;
      r.note = "a scalar read back per step";
      ms[pin] = r.t.medianMs;
      rep.rows.push_back(r);
    }
    smallRatios.push_back({0, {ms[0], ms[1]}});
  }
  // cudaMemcpyAsync from pageable memory behind a busy stream: does the call return at once (the
  // bytes staged), or only when the stream reaches the copy? The host's time inside the call, with
  // a ~5 ms kernel queued before it, per size and direction, pageable and pinned (medians of 9).
  std::vector<std::string> asyncVerdicts;
  {
    cudaStream_t st;
    GPUOPT_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    auto hostMsInCall = [&](bool h2d, char* h, size_t sz) {
      std::vector<double> ms;
      for (int i = 0; i < 9; ++i) {
        GPUOPT_CHECK(cudaStreamSynchronize(st));
        busyFor<<<1, 1, 0, st>>>(5000000ull);
        GPUOPT_LAUNCH_CHECK();
        auto t0 = std::chrono::steady_clock::now();
        if (h2d) GPUOPT_CHECK(cudaMemcpyAsync(dev.p, h, sz, cudaMemcpyHostToDevice, st));
        else GPUOPT_CHECK(cudaMemcpyAsync(h, dev.p, sz, cudaMemcpyDeviceToHost, st));
        auto t1 = std::chrono::steady_clock::now();
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      GPUOPT_CHECK(cudaStreamSynchronize(st));
      std::sort(ms.begin(), ms.end());
      return ms[ms.size() / 2];
    };
    for (int h2d = 1; h2d >= 0; --h2d)
      for (size_t sz : {size_t(96), size_t(4) << 10, size_t(64) << 10, size_t(1) << 20, size_t(16) << 20}) {
        progress("pageable-memcpy", std::string("async ") + (h2d ? "H2D " : "D2H ") + sizeText(sz));
        const double pg = hostMsInCall(h2d, pageable, sz), pn = hostMsInCall(h2d, pinned, sz);
        char b[256];
        snprintf(b, sizeof b, "cudaMemcpyAsync %s %s behind a ~5 ms kernel: the host spends %.3f ms in the call from pageable memory, %.3f ms from pinned",
                 h2d ? "H2D" : "D2H", sizeText(sz).c_str(), pg, pn);
        asyncVerdicts.push_back(b);
      }
    GPUOPT_CHECK(cudaStreamDestroy(st));
  }
  char buf[256];
  for (const auto& v : asyncVerdicts) rep.verdicts.push_back(v);
  for (const auto& [sz, t] : smallRatios) {
    snprintf(buf, sizeof buf, "%s x 4096: pageable %.2f ms, pinned %.2f ms (%.2fx)",
             sz ? (sizeText(sz) + " H2D").c_str() : "4 B D2H", t.first, t.second, t.first / t.second);
    rep.verdicts.push_back(buf);
  }
  snprintf(buf, sizeof buf, "one pinned 256 MiB copy vs 4096 small pageable copies: %.2fx; pageable vs pinned (one copy): %.2fx",
           rep.rows[2].t.medianMs / rep.rows[0].t.medianMs, rep.rows[1].t.medianMs / rep.rows[0].t.medianMs);
  rep.verdicts.push_back(buf);
  rep.remarks.push_back("the copy ceiling column is the device-to-device figure; host copies are bounded by the PCIe/C2C link");
  cudaFreeHost(pinned);
  std::free(pageable);
  return {rep};
}

}  // namespace gpuopt::demos
