#!/usr/bin/env bash
# The measuring half of `gpuopt-lint profile` on the GPU machine, with the real ncu: runs
# tests/gpu/profile_measure_check (built fully static on the development machine, path in $CHECK)
# over the samples built with -lineinfo, over each error path, and times the transpose with and
# without the padding fix that `--try-fixes` applies. Joined on the development machine with
# `gpuopt-lint profile --import $OUT/e2e/<app>` (docs/measurements.md).
set -uo pipefail
OUT=${OUT:-/tmp/gpuopt-profile-e2e}
CHECK=${CHECK:?path of profile_measure_check}
E=$OUT/e2e
mkdir -p "$E" build-prof
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
{ date -u +"date: %Y-%m-%dT%H:%M:%SZ"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$(command -v ncu || echo /usr/local/cuda/bin/ncu)" --version | tail -1; "$NVCC" --version | tail -1; } > "$E/machine.txt" 2>&1
export PATH=$PATH:/usr/local/cuda/bin
b() { "$NVCC" "$@" >> "$E/build.log" 2>&1; }
b -lineinfo -arch=sm_90 -o build-prof/transpose samples/profile/transpose_main.cu &
b -lineinfo -arch=sm_90 -o build-prof/reduction samples/profile/reduction_main.cu &
b -lineinfo -arch=sm_90 -o build-prof/hidden samples/profile/hidden_costs.cu &
b -arch=sm_90 -o build-prof/transpose-nolineinfo samples/profile/transpose_main.cu &
printf 'int main() { return 0; }\n' > build-prof/nokernel.cu; b -arch=sm_90 -o build-prof/nokernel build-prof/nokernel.cu &
printf '#include <cstdio>\n__global__ void k(int* p) { p[threadIdx.x] = 1; }\nint main() { int* p; cudaMalloc(&p, 128); k<<<1, 32>>>(p); cudaDeviceSynchronize(); fprintf(stderr, "giving up\\n"); return 3; }\n' > build-prof/fails.cu
b -lineinfo -arch=sm_90 -o build-prof/fails build-prof/fails.cu &
# the fix --try-fixes applies to transposeShared (gpuopt-lint --fix --dry-run shows the same edit)
sed 's/__shared__ float mat\[TILE\]\[TILE\];/__shared__ float mat[TILE][TILE + 1];/' samples/transpose_ladder.cu > build-prof/transpose_ladder_fixed.cu
sed 's#"../transpose_ladder.cu"#"transpose_ladder_fixed.cu"#' samples/profile/transpose_main.cu > build-prof/transpose_main_fixed.cu
b -lineinfo -arch=sm_90 -o build-prof/transpose-fixed build-prof/transpose_main_fixed.cu &
wait
c() { local name=$1; shift; echo "== $name: $*" | tee -a "$E/check.txt"; timeout 200 "$CHECK" "$@" >> "$E/check.txt" 2>&1; echo "exit $?" >> "$E/check.txt"; }
for app in transpose reduction hidden; do c "$app" "$E/$app" -- ./build-prof/$app; done
c nolineinfo "$E/err-nolineinfo" -- ./build-prof/transpose-nolineinfo
c fails "$E/err-fails" -- ./build-prof/fails
c notfound "$E/err-notfound" -- ./build-prof/no-such-program
c nokernel "$E/err-nokernel" -- ./build-prof/nokernel
c nomatch "$E/err-nomatch" -k no_such_kernel -- ./build-prof/transpose
c times-before "$E/times-before" --times 5 -- ./build-prof/transpose
c times-after "$E/times-after" --times 5 -- ./build-prof/transpose-fixed
cat "$E/check.txt"
find "$E" -name '*.ncu-rep' -delete
cd "$OUT" && tar cJf profile-e2e.tar.xz e2e && ls -la "$OUT"
