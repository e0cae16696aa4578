// No guard: the unit's own include of it must not be in the preamble (it would be read twice);
// its leading include of common.cuh can.
#include "common.cuh"

void launchColumnSum(const float* m, float* out, Dims d);
