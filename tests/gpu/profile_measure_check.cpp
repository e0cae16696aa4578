// The measuring half of `gpuopt-lint profile` (analyzer/profile/profile.cpp: findNcu, gpuVisible, runNcu,
// importExport, measureKernelTimes), run against the real Nsight Compute on the GPU machine, where
// the linter itself cannot run (no Clang 22 there). scripts/gpu-profile-e2e.sh builds it fully
// static on the development machine and runs it there; the exports it writes are then joined here
// with `gpuopt-lint profile --import DIR` (docs/measurements.md).
//
// usage: profile_measure_check OUTDIR [-k REGEX] [--times N] -- COMMAND [ARGS...]
// Prints the exit status `gpuopt-lint profile` would return, its error, and what was imported.
#include <cstdio>
#include <string>
#include <vector>

#include "analyzer/profile/profile.h"

using namespace gpuopt::profile;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s OUTDIR [-k REGEX] [--times N] -- COMMAND [ARGS...]\n", argv[0]);
    return 2;
  }
  RunOptions o;
  o.outDir = argv[1];
  unsigned times = 0;
  int i = 2;
  for (; i < argc && std::string(argv[i]) != "--"; ++i) {
    std::string a = argv[i];
    if (a == "-k" && i + 1 < argc) o.kernelFilter = std::string("regex:") + argv[++i];
    else if (a == "--times" && i + 1 < argc) times = static_cast<unsigned>(std::stoul(argv[++i]));
  }
  for (++i; i < argc; ++i) o.command.push_back(argv[i]);
  o.ncu = findNcu("");
  std::string why;
  int status = 0;
  std::string error;
  if (o.ncu.empty()) status = kNoNcu, error = "ncu not found";
  else if (!gpuVisible(why)) status = kNoGpu, error = why;
  else if (times > 0) {
    std::map<std::string, std::vector<double>> us;
    status = measureKernelTimes(o, times, us, error);
    for (const auto& [k, v] : us) {
      std::printf("times %s:", k.c_str());
      for (double t : v) std::printf(" %.3f", t);
      std::printf(" us\n");
    }
  } else {
    status = runNcu(o, error);
    Profile p;
    if (status == 0) status = importExport(o.outDir, p, error);
    for (const auto& k : p.kernels) {
      std::printf("kernel %s: %u launch(es), block", k.name.c_str(), k.launches);
      for (const auto& b : k.blocks) std::printf(" %ux%ux%u", b[0], b[1], b[2]);
      std::printf(", %.2f us, %zu lines, %.0f stall samples\n", k.durationUs, k.lines.size(), k.samples);
    }
  }
  std::printf("ncu: %s\nstatus: %d\n", o.ncu.c_str(), status);
  if (!error.empty()) std::printf("error: %s\n", error.c_str());
  return status;
}
