#!/usr/bin/env bash
# Compiles the device-rule fixtures and scripts/sass_probes.cu for sm_90 and counts, per kernel,
# the instructions the rules' claims rest on (warp-aggregated atomics, double arithmetic, local
# memory). Needs nvcc and cuobjdump. Output: $OUT/sass-summary.txt and the full SASS per file.
set -uo pipefail
OUT=${OUT:-/tmp/gpuopt-out}
mkdir -p "$OUT/sass"
NVCC=${NVCC:-nvcc}
for f in scripts/sass_probes.cu tests/fixtures/atomic_contention.cu tests/fixtures/double_promotion.cu \
         tests/fixtures/dynamic_local_array.cu; do
  b=$(basename "$f" .cu)
  "$NVCC" -arch=sm_90 -cubin -o "$OUT/sass/$b.cubin" "$f" 2> "$OUT/sass/$b.log" || { echo "$f: nvcc failed"; cat "$OUT/sass/$b.log"; continue; }
  cuobjdump -sass "$OUT/sass/$b.cubin" > "$OUT/sass/$b.sass"
  rm -f "$OUT/sass/$b.cubin"
done
python3 - "$OUT/sass" > "$OUT/sass-summary.txt" <<'PY'
import re, sys, glob, os, subprocess
ops = ["RED", "REDG", "ATOMG", "ATOM", "ATOMS", "VOTEU", "VOTE", "UPOPC", "POPC", "REDUX", "F2F", "DMUL", "DFMA", "DADD",
       "FMUL", "FFMA", "FADD", "MUFU", "LDL", "STL"]
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.sass"))):
    fn, counts = None, {}
    def flush():
        if fn:
            demangled = subprocess.run(["c++filt", fn], capture_output=True, text=True).stdout.strip() or fn
            print(f"{os.path.basename(path)[:-5]:22s} {demangled[:48]:48s} " +
                  " ".join(f"{o}={counts[o]}" for o in ops if counts.get(o)))
    for line in open(path):
        m = re.search(r"Function : (\S+)", line)
        if m:
            flush(); fn, counts = m.group(1), {}
            continue
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9]+)(\.[A-Z0-9_.]+)?", line)
        if m:
            op = m.group(1)
            if op in ops: counts[op] = counts.get(op, 0) + 1
    flush()
PY
cat "$OUT/sass-summary.txt"
