#include "kernels/harness.cuh"
#include "kernels/demos.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>

namespace gpuopt::demos {

void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e == cudaSuccess) return;
  int code = (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInitializationError ||
              e == cudaErrorSystemDriverMismatch || e == cudaErrorCompatNotSupportedOnDevice)
                 ? kNoGpu
                 : e == cudaErrorMemoryAllocation ? kNoMemory : kVerificationFailed;
  std::ostringstream os;
  os << what << " failed: " << cudaGetErrorString(e) << " (" << file << ":" << line << ")";
  throw DemoError(code, os.str());
}

DeviceInfo deviceInfo() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    // Without any driver the runtime says "driver version is insufficient": tell the two apart
    // (cudaDriverGetVersion gives 0 when no driver is installed).
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    auto ver = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    std::string why = e == cudaSuccess ? "no device found"
                      : driver == 0   ? "no NVIDIA driver is installed: libcuda.so.1 was not found"
                      : e == cudaErrorInsufficientDriver
                          ? "the NVIDIA driver supports CUDA " + ver(driver) + ", older than the CUDA " + ver(runtime) +
                                " runtime this build uses: update the driver"
                          : cudaGetErrorString(e);
    throw DemoError(kNoGpu, "no CUDA GPU available (" + why + "); --demo needs an NVIDIA GPU and its driver");
  }
  DeviceInfo d;
  cudaDeviceProp p{};
  GPUOPT_CHECK(cudaGetDeviceProperties(&p, 0));
  d.name = p.name;
  d.ccMajor = p.major, d.ccMinor = p.minor, d.sms = p.multiProcessorCount;
  d.memBytes = p.totalGlobalMem, d.l2Bytes = p.l2CacheSize;
  cudaDeviceGetAttribute(&d.memClockKHz, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&d.busWidth, cudaDevAttrGlobalMemoryBusWidth, 0);
  cudaDriverGetVersion(&d.driver);
  cudaRuntimeGetVersion(&d.runtime);
  return d;
}

void requireMemory(size_t bytes) {
  size_t freeB = 0, total = 0;
  GPUOPT_CHECK(cudaMemGetInfo(&freeB, &total));
  if (bytes + (64u << 20) > freeB) {
    std::ostringstream os;
    os << "too little device memory: need " << (bytes >> 20) << " MiB more, " << (freeB >> 20) << " MiB free";
    throw DemoError(kNoMemory, os.str());
  }
}

Timing timeIt(const std::function<void()>& launch, const std::function<void()>& before, int reps) {
  cudaEvent_t a, b;
  GPUOPT_CHECK(cudaEventCreate(&a));
  GPUOPT_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) {
    if (before) before();
    launch();
    GPUOPT_LAUNCH_CHECK();
  }
  GPUOPT_CHECK(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    if (before) before();
    GPUOPT_CHECK(cudaEventRecord(a));
    launch();
    GPUOPT_LAUNCH_CHECK();
    GPUOPT_CHECK(cudaEventRecord(b));
    GPUOPT_CHECK(cudaEventSynchronize(b));
    float x = 0;
    GPUOPT_CHECK(cudaEventElapsedTime(&x, a, b));
    ms.push_back(x);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  Timing t;
  t.reps = reps;
  t.minMs = ms.front();
  t.maxMs = ms.back();
  t.medianMs = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
  return t;
}

double copyCeilingGBs() {
  static double cached = 0;
  if (cached > 0) return cached;
  size_t bytes = size_t(1) << 30;
  DeviceBuffer<char> a(bytes), b(bytes);
  GPUOPT_CHECK(cudaMemset(a.p, 1, bytes));
  Timing t = timeIt([&] { GPUOPT_CHECK(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice)); });
  cached = 2.0 * bytes / (t.medianMs * 1e-3) / 1e9;
  return cached;
}

std::vector<float> randomFloats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

std::vector<int> randomInts(size_t n, uint32_t seed, int lo, int hi) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

double slowdown(const Report& r, const Row& row) {
  for (const auto& f : r.rows)
    if (f.isFixed && f.timed && f.correct && f.t.medianMs > 0) return row.t.medianMs / f.t.medianMs;
  return 0;
}

void progress(const std::string& demo, const std::string& variant) {
  std::cerr << "[" << demo << "] running " << variant << " ..." << std::endl;
}

static std::string jsonEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (c == '\n') o += "\\n";
    else o += c;
  }
  return o;
}

void printReport(const Report& r, const DeviceInfo& d, bool json, std::ostream& out) {
  double ceil = copyCeilingGBs();
  if (json) {
    out << "{\"demo\":\"" << r.demo << "\",\"title\":\"" << jsonEscape(r.title) << "\",\"device\":{\"name\":\""
        << jsonEscape(d.name) << "\",\"cc\":\"" << d.ccMajor << "." << d.ccMinor << "\",\"driver\":" << d.driver
        << ",\"runtime\":" << d.runtime << ",\"memClockKHz\":" << d.memClockKHz << ",\"busWidth\":" << d.busWidth
        << "},\"size\":\"" << jsonEscape(r.size) << "\",\"copyCeilingGBs\":" << ceil << ",\"finding\":\""
        << jsonEscape(r.finding) << "\",\"rows\":[";
    for (size_t i = 0; i < r.rows.size(); ++i) {
      const Row& w = r.rows[i];
      out << (i ? "," : "") << "{\"variant\":\"" << jsonEscape(w.variant) << "\",\"correct\":" << (w.correct ? "true" : "false")
          << ",\"timed\":" << (w.timed ? "true" : "false") << ",\"medianMs\":" << w.t.medianMs << ",\"minMs\":" << w.t.minMs
          << ",\"maxMs\":" << w.t.maxMs << ",\"reps\":" << w.t.reps << ",\"gbs\":" << w.gbs
          << ",\"pctCeiling\":" << (w.gbs > 0 ? 100.0 * w.gbs / ceil : 0) << ",\"slowdown\":" << slowdown(r, w)
          << ",\"note\":\"" << jsonEscape(w.note) << "\"}";
    }
    out << "],\"verdicts\":[";
    for (size_t i = 0; i < r.verdicts.size(); ++i) out << (i ? "," : "") << "\"" << jsonEscape(r.verdicts[i]) << "\"";
    out << "],\"remarks\":[";
    for (size_t i = 0; i < r.remarks.size(); ++i) out << (i ? "," : "") << "\"" << jsonEscape(r.remarks[i]) << "\"";
    out << "]}\n";
    return;
  }
  out << "== " << r.demo << ": " << r.title << "\n";
  out << "device: " << d.name << " (sm_" << d.ccMajor << d.ccMinor << ", " << d.sms << " SMs, " << (d.memBytes >> 30)
      << " GiB, L2 " << (d.l2Bytes >> 20) << " MiB, memory clock " << d.memClockKHz / 1000 << " MHz, bus " << d.busWidth
      << " bit), driver " << d.driver / 1000 << "." << (d.driver % 1000) / 10 << ", runtime " << d.runtime / 1000 << "."
      << (d.runtime % 1000) / 10 << "\n";
  out << "size: " << r.size << "; device-to-device copy ceiling " << std::fixed << std::setprecision(0) << ceil << " GB/s\n";
  if (!r.finding.empty()) out << "static finding: " << r.finding << "\n";
  out << std::left << std::setw(34) << "variant" << std::right << std::setw(11) << "median ms" << std::setw(11) << "min ms"
      << std::setw(11) << "max ms" << std::setw(10) << "GB/s" << std::setw(8) << "% ceil" << std::setw(10) << "vs fixed"
      << "  note\n";
  for (const auto& w : r.rows) {
    out << std::left << std::setw(34) << w.variant << std::right;
    if (!w.correct && w.timed) {
      out << std::setw(11) << "WRONG" << std::setw(11) << "-" << std::setw(11) << "-" << std::setw(10) << "-" << std::setw(8)
          << "-" << std::setw(10) << "-";
    } else if (!w.timed) {
      out << std::setw(11) << "-" << std::setw(11) << "-" << std::setw(11) << "-" << std::setw(10) << "-" << std::setw(8) << "-"
          << std::setw(10) << "-";
    } else {
      out << std::fixed << std::setprecision(4) << std::setw(11) << w.t.medianMs << std::setw(11) << w.t.minMs << std::setw(11)
          << w.t.maxMs << std::setprecision(0) << std::setw(10) << (w.gbs > 0 ? w.gbs : 0) << std::setprecision(1)
          << std::setw(7) << (w.gbs > 0 ? 100.0 * w.gbs / ceil : 0) << "%" << std::setprecision(2) << std::setw(9)
          << slowdown(r, w) << "x";
    }
    out << "  " << w.note << "\n";
  }
  for (const auto& v : r.verdicts) out << "verdict: " << v << "\n";
  for (const auto& v : r.remarks) out << "note: " << v << "\n";
  out << "\n";
}

const std::vector<DemoInfo>& list() {
  static const std::vector<DemoInfo> l = {
      {"bank-conflict", "shared-memory stride sweep (1..33) and transpose with [32][32] vs padded [32][33] tile"},
      {"uncoalesced-access", "global stride sweep (1..32), random vs identity gather, naive vs tiled transpose"},
      {"divergent-branch", "tid % 2 branches vs warp-aligned split; reduce0 (modulo) vs sequential addressing"},
      {"missing-syncthreads", "the lectures' shift kernel: no barrier, one barrier, fixed (wrong results counted)"},
      {"unsafe-warp-reduce", "last-warp unroll: plain, volatile, __syncwarp, __shfl_down_sync (wrong results, time)"},
      {"pageable-memcpy", "pageable vs pinned copies, many small copies vs one batched copy"},
      {"barrier-divergence", "why there is no timing demo (undefined behaviour); what compute-sanitizer reports"},
      {"unbatched-memcpy", "16 MiB from pinned memory in one copy vs 4096 x 4 KiB copies, chunk-size sweep"},
      {"serialized-transfers", "copy in, kernel, copy out: serial loop vs 16 chunks over 4 streams; overlap, copy engines"},
      {"alloc-in-loop", "cudaMalloc/cudaFree per iteration vs one allocation vs cudaMallocAsync; cudaMallocHost per iteration"},
      {"global-memory-race", "lecture 001's c[i] = c[i] + c[i-1]: in place, Fix1 (barrier), second array (wrong results counted)"},
      {"atomic-contention", "one counter from every thread, a float sum, a 4-bin histogram: vs one atomic per block / privatised bins"},
      {"partial-warp-block", "100, 48, 33 threads per block vs 128 and 64 (compute-bound and memory-bound)"},
      {"double-promotion", "v * 1.1 - 0.1 (double literals) vs v * 1.1f - 0.1f"},
      {"dynamic-local-array", "per-thread 32-bin histogram in a local array vs a shared-memory slice"},
      {"unused-block-dimension", "dim3(32, 8) for a kernel reading only threadIdx.x vs a 1-D block (memory- and compute-bound)"},
      {"reduction", "the lectures' reduction ladder reduce0..reduce6 plus a shuffle version, at 2^24 and 2^20"},
  };
  return l;
}

int run(const std::string& name, bool json, std::ostream& out, std::ostream& err) {
  bool known = name == "all";
  for (const auto& d : list()) known = known || d.name == name;
  if (!known) {
    err << "gpuopt-lint: error: unknown demo '" << name << "' (see --demo list)\n";
    return kUsage;
  }
  int rc = kOk;
  try {
    DeviceInfo dev = deviceInfo();
    for (const auto& d : list()) {
      if (name != "all" && d.name != name) continue;
      std::vector<Report> rs;
      if (d.name == "bank-conflict") rs = demoBankConflict();
      else if (d.name == "uncoalesced-access") rs = demoUncoalesced();
      else if (d.name == "divergent-branch") rs = demoDivergent();
      else if (d.name == "missing-syncthreads") rs = demoMissingSync();
      else if (d.name == "unsafe-warp-reduce") rs = demoWarpReduce();
      else if (d.name == "pageable-memcpy") rs = demoPageable();
      else if (d.name == "barrier-divergence") rs = demoBarrierDivergence();
      else if (d.name == "unbatched-memcpy") rs = demoUnbatched();
      else if (d.name == "serialized-transfers") rs = demoSerialized();
      else if (d.name == "alloc-in-loop") rs = demoAllocInLoop();
      else if (d.name == "reduction") rs = demoReduction();
      else if (d.name == "global-memory-race") rs = demoGlobalRace();
      else if (d.name == "atomic-contention") rs = demoAtomic();
      else if (d.name == "partial-warp-block") rs = demoPartialWarp();
      else if (d.name == "double-promotion") rs = demoDoublePromotion();
      else if (d.name == "dynamic-local-array") rs = demoLocalArray();
      else if (d.name == "unused-block-dimension") rs = demoUnusedBlockDim();
      for (const auto& r : rs) {
        for (const auto& row : r.rows)
          if (!row.correct && row.isFixed) rc = kVerificationFailed;
        printReport(r, dev, json, out);
        out.flush();
      }
    }
  } catch (const DemoError& e) {
    err << "gpuopt-lint: error: " << e.what() << "\n";
    return e.code;
  }
  return rc;
}

}  // namespace gpuopt::demos
