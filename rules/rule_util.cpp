#include "rules/rule_util.h"

#include <fmt/format.h>

namespace gpuopt {

std::string laneList(const std::vector<unsigned>& lanes, size_t max) {
  std::string s = lanes.size() == 1 ? "lane " : "lanes ";
  for (size_t i = 0; i < lanes.size() && i < max; ++i) s += (i ? ", " : "") + std::to_string(lanes[i]);
  if (lanes.size() > max) s += fmt::format(", ... {}", lanes.back());
  return s;
}

std::string atContext(const std::string& ctx) { return ctx.empty() ? std::string() : " (at " + ctx + ")"; }

std::vector<unsigned> warpLanes(const Mask& mask, unsigned w) {
  std::vector<unsigned> out;
  for (unsigned t = w * 32; t < mask.size() && t < (w + 1) * 32; ++t)
    if (mask[t]) out.push_back(t);
  return out;
}

std::string accessKind(const Access& a) {
  if (a.isRead && a.isWrite) return "load/store";
  return a.isWrite ? "store" : "load";
}

}  // namespace gpuopt
