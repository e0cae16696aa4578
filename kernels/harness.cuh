// The one timing and verification harness every demo uses.
//  - CUDA events, 3 warm-up runs, median of >= 20 timed runs plus min and max
//  - problem sizes larger than L2; inputs random and non-zero
//  - output poisoned before every run, every element checked against a CPU reference
//  - every CUDA call and launch checked; a variant that fails its check is reported as WRONG
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/demos.h"

namespace gpuopt::demos {

struct DemoError : std::runtime_error {
  int code;
  DemoError(int c, const std::string& m) : std::runtime_error(m), code(c) {}
};

void check(cudaError_t e, const char* what, const char* file, int line);
#define GPUOPT_CHECK(call) ::gpuopt::demos::check((call), #call, __FILE__, __LINE__)
#define GPUOPT_LAUNCH_CHECK() ::gpuopt::demos::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

struct DeviceInfo {
  std::string name;
  int ccMajor = 0, ccMinor = 0, sms = 0;
  int driver = 0, runtime = 0;
  size_t memBytes = 0, l2Bytes = 0;
  int memClockKHz = 0, busWidth = 0;
};
DeviceInfo deviceInfo();  // throws DemoError(kNoGpu) without a usable GPU

// Throws DemoError(kNoMemory) if `bytes` more device memory cannot be had.
void requireMemory(size_t bytes);

template <class T>
struct DeviceBuffer {
  T* p = nullptr;
  size_t n = 0;
  explicit DeviceBuffer(size_t count) : n(count) {
    requireMemory(count * sizeof(T));
    GPUOPT_CHECK(cudaMalloc(&p, count * sizeof(T)));
  }
  ~DeviceBuffer() { if (p) cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void upload(const std::vector<T>& h) { GPUOPT_CHECK(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> download() const {
    std::vector<T> h(n);
    GPUOPT_CHECK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  void poison() { GPUOPT_CHECK(cudaMemset(p, 0xFF, n * sizeof(T))); }
};

struct Timing {
  double medianMs = 0, minMs = 0, maxMs = 0;
  int reps = 0;
};

// Times `launch` (which enqueues the work) with events. `before` runs untimed before each rep
// (e.g. poisoning the output). Throws on any CUDA error.
Timing timeIt(const std::function<void()>& launch, const std::function<void()>& before = {}, int reps = 20);

struct Row {
  std::string variant;
  Timing t;
  double gbs = 0;        // effective GB/s (useful bytes / median time); 0 = not applicable
  bool correct = true;
  bool timed = true;
  std::string note;      // e.g. "32-way predicted", "wrong in 12 of 20 runs"
  bool isFixed = false;  // the reference row for slowdowns
};

struct Report {
  std::string demo, title, size, finding;  // finding: the static finding the demo proves
  std::vector<Row> rows;
  std::vector<std::string> verdicts;
  std::vector<std::string> remarks;
};

// The measured device-to-device copy ceiling (GB/s, bytes read + written), measured once per run.
double copyCeilingGBs();

void printReport(const Report& r, const DeviceInfo& d, bool json, std::ostream& out);
void progress(const std::string& demo, const std::string& variant);

// Helpers.
std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = 0.5f, float hi = 1.5f);
std::vector<int> randomInts(size_t n, uint32_t seed, int lo = 1, int hi = 9);
double slowdown(const Report& r, const Row& row);

// Demos (one per rule; a demo may print several tables), plus the reduction ladder); each fills a Report.
std::vector<Report> demoBankConflict();
std::vector<Report> demoUncoalesced();
std::vector<Report> demoDivergent();
std::vector<Report> demoMissingSync();
std::vector<Report> demoWarpReduce();
std::vector<Report> demoPageable();
std::vector<Report> demoBarrierDivergence();
std::vector<Report> demoUnbatched();
std::vector<Report> demoSerialized();
std::vector<Report> demoAllocInLoop();
std::vector<Report> demoReduction();
std::vector<Report> demoGlobalRace();
std::vector<Report> demoAtomic();
std::vector<Report> demoPartialWarp();
std::vector<Report> demoDoublePromotion();
std::vector<Report> demoLocalArray();
std::vector<Report> demoUnusedBlockDim();

}  // namespace gpuopt::demos
