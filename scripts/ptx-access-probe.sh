#!/usr/bin/env bash
# Runs scripts/ptx_access_probe.cu on the GPU machine (from the repository root) under Nsight Compute:
# per SASS instruction, the shared wavefronts, their ideal and the n-way conflict of each ldmatrix,
# stmatrix, cp.async and vector load (source page), and per kernel the shared and global counters.
# Output under $OUT/ptx-probe (the source-page CSV is what docs/rules/bank-conflict.md quotes).
set -uo pipefail
OUT=${OUT:-/tmp/gpuopt-ptx-probe}
D=$OUT/ptx-probe
mkdir -p "$D" build-probe
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$NCU" --version | tail -1
  "$NVCC" --version | tail -1
} > "$D/machine.txt" 2>&1
"$NVCC" -lineinfo -arch=sm_90 -o build-probe/ptx_probe scripts/ptx_access_probe.cu > "$D/build.log" 2>&1 || { cat "$D/build.log"; exit 1; }
./build-probe/ptx_probe > "$D/run.txt" 2>&1
timeout 300 "$NCU" --section SourceCounters --import-source yes -f -o "$D/probe" \
  --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,smsp__sass_inst_executed_op_ldsm.sum,smsp__sass_inst_executed_op_ldgsts.sum \
  ./build-probe/ptx_probe > "$D/ncu.out" 2> "$D/ncu.err"
echo "rc=$?" >> "$D/ncu.out"
"$NCU" -i "$D/probe.ncu-rep" --page source --csv --print-source sass > "$D/source-sass.csv" 2> "$D/source.err"
"$NCU" -i "$D/probe.ncu-rep" --page raw --csv > "$D/raw.csv" 2> "$D/raw.err"
# The rows of the memory instructions, for a quick look.
grep -E '"(LDSM|STSM|LDGSTS|LDS|LDG|STS)' "$D/source-sass.csv" | head -60 > "$D/memory-rows.csv" || true
head -1 "$D/source-sass.csv" > "$D/header.csv" || true
ls -la "$D"
