#!/usr/bin/env bash
# On the GPU machine: the uncoalesced-access demo (its "own run" report times a thread's loop over
# its own B doubles against the lanes along the run) and Nsight Compute's counters for the same two
# kernels per B (scripts/own_run_probe.cu). Output under $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/gpuopt-out}
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; date -u; } > "$OUT/own-run-machine.txt"
cmake -S . -B build-gpu -DGPUOPT_ANALYZER=OFF -DGPUOPT_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j "$(nproc)" >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
./build-gpu/bin/gpuopt-lint --demo uncoalesced-access 2> "$OUT/progress.txt" > "$OUT/demo-uncoalesced.txt"
echo "demo exit status: $?" >> "$OUT/demo-uncoalesced.txt"
nvcc -O3 -arch=sm_90 -I. -o "$OUT/own_run_probe" scripts/own_run_probe.cu || exit 1
for b in 1 2 4 8 16; do
  echo "== B = $b" >> "$OUT/own-run-ncu.txt"
  ncu --kernel-name regex:'ownRun|laneRun' \
      --metrics gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,dram__bytes_read.sum,dram__bytes_write.sum \
      "$OUT/own_run_probe" "$b" >> "$OUT/own-run-ncu.txt" 2>&1
done
rm -f "$OUT/own_run_probe"
