#include "kernels.cuh"

void launchScale(float* m, Dims d) { scaleRows<<<(d.rows + 127) / 128, 128>>>(m, d); }
