// Needs a third-party header that is not installed: one finding names it, with the database entry
// and the flags whose folders were searched; the errors that follow from it are its notes.
#include "scale_config.h"
#include <gpuopt_fixture_not_installed.h>  // expect: compile-error

__global__ void useVendor(float* a, vendor_handle h) {
  a[threadIdx.x] = vendor_scale(h) * SCALE_STRIDE;
}

__global__ void plain(float* a) {
  a[threadIdx.x * SCALE_STRIDE] = 1.0f;  // expect: uncoalesced-access
}

void launch2(float* a) {
  plain<<<1, 256>>>(a);
}
