// Shared by join.cpp (verdicts on findings), measured_only.cpp (findings the counters add),
// import.cpp and profile.cpp.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzer/profile/profile.h"

namespace gpuopt::profile::detail {

// Path components, for suffix matching ("/work/main/samples/x.cu" ~ "samples/x.cu").
std::vector<std::string> components(const std::string& path);
size_t commonSuffix(const std::vector<std::string>& a, const std::vector<std::string>& b);
// A path as compared: absolute, normalised.
std::string canonical(const std::string& path);

std::string pct(double share);

// A file's whole text; `ok` false when it cannot be opened (import.cpp).
std::string readFile(const std::string& path, bool& ok);

// What the findings speak for, so that no measured-only finding repeats them.
struct Covered {
  std::set<const Instruction*> instructions;        // matched to a memory finding
  std::set<std::pair<const Line*, std::string>> lines;  // (line, "lanes"): a divergent-branch finding's
};

// Adds the measured-only findings (one per line and kernel) to `results`.
void addMeasuredOnly(const Profile& p, std::vector<FileResult>& results, const Covered& covered, const JoinOptions& o);

}  // namespace gpuopt::profile::detail
