// pageable-memcpy: pageable vs pinned host memory, many small copies vs one batched copy.
#include <chrono>
#include <cstring>

#include "kernels/harness.cuh"

namespace gpuopt::demos {

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
  char buf[256];
  snprintf(buf, sizeof buf, "one pinned 256 MiB copy vs 4096 small pageable copies: %.2fx; pageable vs pinned (one copy): %.2fx",
           rep.rows[2].t.medianMs / rep.rows[0].t.medianMs, rep.rows[1].t.medianMs / rep.rows[0].t.medianMs);
  rep.verdicts.push_back(buf);
  rep.remarks.push_back("the copy ceiling column is the device-to-device figure; host copies are bounded by the PCIe/C2C link");
  cudaFreeHost(pinned);
  std::free(pageable);
  return {rep};
}

}  // namespace gpuopt::demos
