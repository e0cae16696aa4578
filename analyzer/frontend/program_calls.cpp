#include "analyzer/frontend/program_calls.h"

#include <algorithm>

#include "analyzer/frontend/cache.h"

namespace gpuopt {

const std::vector<ProgramCallSite>& ProgramCalls::callsOf(const std::string& name) const {
  static const std::vector<ProgramCallSite> none;
  auto it = calls_.find(name);
  return it == calls_.end() ? none : it->second;
}

const std::vector<std::string>& ProgramCalls::otherUsesOf(const std::string& name) const {
  static const std::vector<std::string> none;
  auto it = otherUses_.find(name);
  return it == otherUses_.end() ? none : it->second;
}

void ProgramCalls::addOtherUse(const std::string& name, const std::string& file) {
  auto& v = otherUses_[name];
  if (std::find(v.begin(), v.end(), file) == v.end()) v.push_back(file);
}

std::string ProgramCalls::fingerprint(const std::string& name) const {
  // Sorted, so that the order the files were read in does not matter; lines left out, so that an
  // edit above a call keeps the answer.
  std::vector<std::string> parts;
  for (const auto& s : callsOf(name)) {
    std::string p = s.file + "(";
    for (const auto& a : s.args) p += (a ? std::to_string(*a) : std::string("?")) + ",";
    parts.push_back(p + ")");
  }
  for (const auto& f : otherUsesOf(name)) parts.push_back("&" + f);
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) out += p + ";";
  return hashText(out);
}

}  // namespace gpuopt
