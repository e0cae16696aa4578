#!/usr/bin/env bash
# Builds the CUDA-only gpuopt-lint (no Clang) and runs every demo; used on the GPU machine.
# Output: $OUT/demo-all.txt (and build log). Usage: OUT=/some/dir scripts/gpu-demos.sh
set -uo pipefail
OUT=${OUT:-/tmp/gpuopt-out}
mkdir -p "$OUT"
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  nvcc --version | tail -2
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
cmake -S . -B build-gpu -DGPUOPT_ANALYZER=OFF -DGPUOPT_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j "$(nproc)" >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
./build-gpu/bin/gpuopt-lint --version
./build-gpu/bin/gpuopt-lint --demo all 2> "$OUT/progress.txt" | tee "$OUT/demo-all.txt"
rc=$?
echo "demo exit status: $rc" | tee -a "$OUT/demo-all.txt"
./build-gpu/bin/gpuopt-lint --demo barrier-divergence --json > "$OUT/demo-barrier.json" 2>&1
./build-gpu/bin/gpuopt-lint lint-me.cu > "$OUT/no-analyzer.txt" 2>&1; echo "lint in CUDA-only build: exit $?" >> "$OUT/no-analyzer.txt"
exit $rc
