#!/usr/bin/env bash
# Validates gpuopt-lint's SARIF with Microsoft's SARIF multitool (npm @microsoft/sarif-multitool).
set -euo pipefail
repo=$1 bin=$2 tooldir=$3
tool="$tooldir/node_modules/.bin/sarif-multitool"
if [ ! -x "$tool" ]; then
  mkdir -p "$tooldir"
  (cd "$tooldir" && npm install --silent --no-audit --no-fund @microsoft/sarif-multitool >/dev/null 2>&1) || true
fi
[ -x "$tool" ] || { echo "FAIL: @microsoft/sarif-multitool could not be installed into $tooldir"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$repo"
status=0
check() {  # name, lint args...
  local name=$1; shift
  set +e
  "$bin" --format sarif "$@" > "$work/$name.sarif"
  local rc=$?
  set -e
  [ $rc -le 2 ] || { echo "FAIL: $name: gpuopt-lint exited $rc"; status=1; return; }
  validate "$name"
}
validate() {  # name: $work/name.sarif
  local name=$1
  # Schema and rule checks; any error or warning (e.g. SARIF1001) fails.
  if "$tool" validate "$work/$name.sarif" > "$work/$name.out" 2>&1 &&
     grep -q "Analysis completed successfully" "$work/$name.out" &&
     ! grep -qE "(error|warning) (SARIF|JSON)[0-9]*" "$work/$name.out"; then
    echo "ok: $name: valid, no warnings"
  else
    echo "FAIL: $name is not valid SARIF:"; head -c 6000 "$work/$name.out"; status=1
  fi
}
check findings tests/fixtures/bank_conflict.cu tests/fixtures/missing_syncthreads.cu
check nofindings --rules=pageable-memcpy tests/fixtures/bank_conflict.cu
printf '__global__ void k(float* a) {\n  a[0] = ;\n}\n' > "$work/broken.cu"
check inputerror "$work/broken.cu"
# Two shards merged into one log (merge-sarif), validated like the others.
"$bin" --format sarif --no-config --shard 1/2 samples/*.cu > "$work/shard1.sarif" || true
"$bin" --format sarif --no-config --shard 2/2 samples/*.cu > "$work/shard2.sarif" || true
"$bin" merge-sarif -o "$work/merged.sarif" "$work/shard1.sarif" "$work/shard2.sarif"
validate merged
[ $status -eq 0 ] && echo "4 passed, 0 failed"
exit $status
