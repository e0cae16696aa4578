#!/usr/bin/env bash
# Runs scripts/table_gather.cu on the GPU machine: times per table size and, for two sizes, the
# sector counters Nsight Compute reads for the random gather. Output under $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/gpuopt-out}
mkdir -p "$OUT"
nvcc -O3 -arch=sm_90 -o "$OUT/table_gather" scripts/table_gather.cu || exit 1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; date -u; } > "$OUT/table-gather.txt"
"$OUT/table_gather" >> "$OUT/table-gather.txt" 2>&1
for b in 808 4096 65536 268435456; do
  ncu --kernel-name regex:gather --launch-count 2 \
      --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,gpu__time_duration.sum \
      "$OUT/table_gather" "$b" > "$OUT/ncu-$b.txt" 2>&1
done
rm -f "$OUT/table_gather"
