#!/bin/bash
# Which kernels nvcc compiles with a branch (BRA) versus predication/selects, per kernel, sm_90.
# Usage: scripts/sass-branches.sh FILE.cu (on a machine with the CUDA toolkit; no GPU needed).
src=${1:-docs/data/divergent-branch-sass.cu}
OUT=${OUT:-.}
nvcc --version | tail -1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
nvcc -arch=sm_90 -cubin -O3 -o "$OUT/div.cubin" "$src" || exit 1
cuobjdump -sass "$OUT/div.cubin" > "$OUT/div.sass"
# Per kernel: branches (the one BRA after EXIT is the end-of-kernel self-loop), selects,
# predicated instructions and stores.
python3 - "$OUT/div.sass" <<'PY' | tee "$OUT/summary.txt"
import re, sys
cur, stats = None, {}
for l in open(sys.argv[1]):
    m = re.search(r'Function : (\S+)', l)
    if m:
        cur = m.group(1); stats[cur] = dict(BRA=0, SEL=0, predicated=0, stores=0); continue
    ins = re.search(r'/\*[0-9a-f]{4}\*/\s+(.*?);', l)
    if not cur or not ins: continue
    t = ins.group(1); op = re.sub(r'^@!?P\w+\s+', '', t).split()[0]
    s = stats[cur]
    s['BRA'] += op.startswith('BRA'); s['SEL'] += op in ('SEL', 'FSEL')
    s['stores'] += op.startswith(('STG', 'STS')); s['predicated'] += t.startswith('@')
for k, s in sorted(stats.items()):
    print(f"{k:32} BRA {s['BRA']} SEL {s['SEL']} predicated {s['predicated']} stores {s['stores']}")
PY
