// The lectures' reduction ladder (lecture 000 / 003), shared by the reduction and divergent-branch demos.
#pragma once
#include "kernels/harness.cuh"

namespace gpuopt::demos {
// 0..6: reduce0 (interleaved, modulo) .. reduce6 (cascaded); 7: shuffle + int4 loads. Block size 256.
const char* reduceName(int which);
// Times one reduction of n random ints (inputs rotated across copies so L2 cannot serve them when
// n*4 bytes is smaller than the L2) and checks the block partial sums against the CPU.
Row reduceRow(int which, size_t n, const std::string& demo);
}
