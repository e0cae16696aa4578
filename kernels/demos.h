// The measured proofs: `gpuopt-lint --demo <rule>` (built with nvcc; no Clang needed).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

namespace gpuopt::demos {

struct DemoInfo {
  std::string name;     // a rule id, or "reduction"
  std::string summary;  // what it measures
};

const std::vector<DemoInfo>& list();

// Exit codes of run().
inline constexpr int kOk = 0;
inline constexpr int kVerificationFailed = 1;  // a variant expected to be correct computed a wrong result
inline constexpr int kUsage = 2;
inline constexpr int kNoGpu = 3;               // no CUDA device or driver
inline constexpr int kNoMemory = 4;            // too little device memory for the problem size

// Runs one demo ("all" runs every one). Tables go to `out` (JSON when `json`), progress to `progress`.
int run(const std::string& name, bool json, std::ostream& out, std::ostream& progress);

}  // namespace gpuopt::demos
