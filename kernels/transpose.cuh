// Matrix transpose kernels shared by the bank-conflict and uncoalesced-access demos (lecture 003, V1 to V3).
#pragma once
#include "kernels/harness.cuh"

namespace gpuopt::demos {
// which: naive only (uncoalesced demo) adds the naive row; tiles only (bank-conflict) adds the two tiles.
Report transposeReport(bool withNaive);
}
