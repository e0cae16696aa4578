#!/usr/bin/env bash
# Records the Nsight Compute exports that tests/data/ncu/ holds (run on the GPU machine, from the
# repository root): builds the profiling samples with -lineinfo, profiles them, exports the source,
# details, raw and summary pages as CSV, and records what ncu says on each error path. Also runs
# `--demo bank-conflict` from a CUDA-only build. Output under $OUT (tarred by the caller).
set -uo pipefail
OUT=${OUT:-/tmp/gpuopt-profile}
D=$OUT/ncu
mkdir -p "$D" "$D/errors" build-prof
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  echo "ncu: $NCU"; "$NCU" --version | tail -2
  "$NVCC" --version | tail -2
} > "$D/machine.txt" 2>&1
cat "$D/machine.txt"
# the CUDA-only build for the demo, in the background while the samples build
( cmake -S . -B build-gpu -DGPUOPT_ANALYZER=OFF -DGPUOPT_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/demo-build.log" 2>&1 &&
  cmake --build build-gpu -j 12 >> "$OUT/demo-build.log" 2>&1 ) &
DEMO_BUILD=$!
b() { echo "+ nvcc $*" >> "$D/build.log"; "$NVCC" "$@" >> "$D/build.log" 2>&1; }
b -lineinfo -arch=sm_90 -o build-prof/transpose samples/profile/transpose_main.cu
b -lineinfo -arch=sm_90 -o build-prof/reduction samples/profile/reduction_main.cu
b -lineinfo -arch=sm_90 -o build-prof/hidden samples/profile/hidden_costs.cu
b -arch=sm_90 -o build-prof/transpose-nolineinfo samples/profile/transpose_main.cu
printf 'int main() { return 0; }\n' > build-prof/nokernel.cu; b -arch=sm_90 -o build-prof/nokernel build-prof/nokernel.cu
printf '#include <cstdio>\n__global__ void k(int* p) { p[threadIdx.x] = 1; }\nint main() { int* p; cudaMalloc(&p, 128); k<<<1, 32>>>(p); cudaDeviceSynchronize(); fprintf(stderr, "giving up\\n"); return 3; }\n' > build-prof/fails.cu
b -lineinfo -arch=sm_90 -o build-prof/fails build-prof/fails.cu
# padded twin of the transpose sample (the fix gpuopt-lint proposes), for kernel times before/after
sed 's/__shared__ float mat\[TILE\]\[TILE\];/__shared__ float mat[TILE][TILE + 1];/' samples/transpose_ladder.cu > build-prof/transpose_ladder_fixed.cu
sed 's#"../transpose_ladder.cu"#"transpose_ladder_fixed.cu"#' samples/profile/transpose_main.cu > build-prof/transpose_main_fixed.cu
b -lineinfo -arch=sm_90 -o build-prof/transpose-fixed build-prof/transpose_main_fixed.cu
ls -la build-prof >> "$D/build.log"

SECTIONS="--section SourceCounters --section LaunchStats --section SpeedOfLight"
for app in transpose reduction hidden; do
  echo "== profile $app"
  ( cd build-prof && timeout 240 "$NCU" $SECTIONS --import-source yes -f -o "$D/$app" ./$app ) > "$D/$app.profile.out" 2> "$D/$app.profile.err"
  echo "rc=$?" >> "$D/$app.profile.out"
  R="$D/$app.ncu-rep"
  "$NCU" -i "$R" --page source --csv --print-source cuda,sass > "$D/$app.source-cuda-sass.csv" 2> "$D/$app.source-cuda-sass.err"
  "$NCU" -i "$R" --page source --csv --print-source cuda > "$D/$app.source-cuda.csv" 2> "$D/$app.source-cuda.err"
  "$NCU" -i "$R" --page source --csv --print-source sass > "$D/$app.source-sass.csv" 2> "$D/$app.source-sass.err"
  "$NCU" -i "$R" --page details --csv > "$D/$app.details.csv" 2> "$D/$app.details.err"
  "$NCU" -i "$R" --page raw --csv > "$D/$app.raw.csv" 2> "$D/$app.raw.err"
  "$NCU" -i "$R" --print-summary per-kernel --csv > "$D/$app.summary.csv" 2> "$D/$app.summary.err"
done
"$NCU" -i "$D/transpose.ncu-rep" --page source --csv --print-source cuda,sass --kernel-name transposeShared > "$D/transpose.source-one-kernel.csv" 2>&1
"$NCU" -i "$D/transpose.ncu-rep" --page source --print-source cuda > "$D/transpose.source-cuda.txt" 2>&1

# Error paths: what ncu prints and returns.
E=$D/errors
run_err() { local name=$1; shift; ( cd build-prof && timeout 60 "$@" ) > "$E/$name.out" 2> "$E/$name.err"; echo "rc=$?" >> "$E/$name.out"; }
run_err nolineinfo "$NCU" --section SourceCounters --import-source yes -f -o "$E/nolineinfo" ./transpose-nolineinfo
"$NCU" -i "$E/nolineinfo.ncu-rep" --page source --csv --print-source cuda,sass > "$E/nolineinfo.source-cuda-sass.csv" 2> "$E/nolineinfo.source.err"
"$NCU" -i "$E/nolineinfo.ncu-rep" --page source --csv --print-source cuda > "$E/nolineinfo.source-cuda.csv" 2>> "$E/nolineinfo.source.err"
run_err nokernel "$NCU" --section SourceCounters --import-source yes -f -o "$E/nokernel" ./nokernel
ls -la "$E" > "$E/ls-after-nokernel.txt"
run_err fails "$NCU" --section SourceCounters --import-source yes -f -o "$E/fails" ./fails
run_err notfound "$NCU" --section SourceCounters --import-source yes -f -o "$E/notfound" ./no-such-program
run_err nomatch "$NCU" --section SourceCounters --import-source yes -k no_such_kernel -f -o "$E/nomatch" ./transpose
run_err nogpu env CUDA_VISIBLE_DEVICES= "$NCU" --section SourceCounters --import-source yes -f -o "$E/nogpu" ./transpose
chmod -R a+rwx build-prof "$D" 2>/dev/null
run_err noperm setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp "$NCU" --section SourceCounters -f -o /tmp/noperm ./transpose
run_err badimport "$NCU" -i "$E/does-not-exist.ncu-rep" --page source --csv --print-source cuda

# Kernel times, 5 runs each, original and padded transpose (what --try-fixes measures).
for v in transpose transpose-fixed; do
  for r in 1 2 3 4 5; do
    ( cd build-prof && "$NCU" --metrics gpu__time_duration.sum --csv ./$v ) > "$D/times-$v-$r.csv" 2>/dev/null
  done
done

# The bank-conflict demo from a CUDA-only build.
wait $DEMO_BUILD || tail -30 "$OUT/demo-build.log"
./build-gpu/bin/gpuopt-lint --demo bank-conflict 2> "$OUT/demo-progress.txt" > "$OUT/demo-bank-conflict.txt"
echo "demo exit status: $?" >> "$OUT/demo-bank-conflict.txt"
cat "$OUT/demo-bank-conflict.txt"
# a report of the demo's stride sweep, for the n-way counters behind it
timeout 100 "$NCU" --section SourceCounters -k regex:smemStride -f -o "$D/demo-bank" ./build-gpu/bin/gpuopt-lint --demo bank-conflict > "$D/demo-bank.profile.out" 2>&1
"$NCU" -i "$D/demo-bank.ncu-rep" --page source --csv --print-source cuda > "$D/demo-bank.source-cuda.csv" 2>&1
rm -f "$D"/*.ncu-rep.tmp
cd "$OUT" && tar cJf profile-record.tar.xz ncu demo-*.txt demo-build.log 2>/dev/null; ls -la "$OUT"
