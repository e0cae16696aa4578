// pageable-memcpy: pageable vs pinned host memory, many small copies vs one batched copy.
#include <chrono>
#include <cstring>

#include "kernels/harness.cuh"

namespace gpuopt::demos {

namespace {
std::string sizeText(size_t bytes) {
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
  char buf[256];
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
