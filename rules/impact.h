// Measured penalties, copied from docs/measurements.md (the `--demo all` run on the GPU machine),
// quoted in findings so a message says how bad the pattern was when measured. Empty when no
// measurement exists yet.
#pragma once
#include <string>
#include <string_view>

namespace gpuopt {
std::string measuredImpact(std::string_view ruleId);
}
