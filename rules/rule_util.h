// Small helpers shared by the kernel rules.
#pragma once
#include <string>
#include <vector>

#include "analyzer/kernel_model.h"

namespace gpuopt {

// "lanes 0, 1, 2, 3 ... 31" (at most `max` listed).
std::string laneList(const std::vector<unsigned>& lanes, size_t max = 6);
// " (at s = 16)" or "".
std::string atContext(const std::string& ctx);
// Active thread indices of warp `w` in `mask`.
std::vector<unsigned> warpLanes(const Mask& mask, unsigned w);
// The kind of access for messages: "load", "store", "load/store".
std::string accessKind(const Access& a);

}  // namespace gpuopt
