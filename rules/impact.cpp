#include "rules/impact.h"

namespace gpuopt {

std::string measuredImpact(std::string_view id) {
  // Filled from docs/measurements.md; see that file for device, driver, date and command.
  (void)id;
  return {};
}

}  // namespace gpuopt
