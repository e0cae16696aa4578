#!/usr/bin/env bash
# Records the Nsight Compute exports of our own test programs on the GPU machine:
#   - tests/data/ncu/programs/*.cu  -> $OUT/own/<name>/   (issue 30: the per-instruction join)
#   - bench/impact/*.cu             -> $OUT/impact/<name>/ (issue 28: per-line sectors and stall shares)
# and, when $CORPUS holds a copy of third-party programs (never committed), their exports into
# $OUT/corpus/ (the agreement table of docs/measurements.md).
#
# Usage (from the folder that holds tests/ and bench/, e.g. a carried copy):
#   OUT=/tmp/out NCU=ncu NVCC=nvcc [CORPUS=dir] bash scripts/gpu-profile-programs.sh
# Each program: nvcc -lineinfo -arch=sm_90, then
#   ncu --section SourceCounters --section LaunchStats --section SpeedOfLight [issue 28: --section
#   WarpStateStats --section MemoryWorkloadAnalysis] --import-source yes -c 20 -f -o R ./app
#   ncu -i R.ncu-rep --page source --csv --print-source cuda,sass > source.csv
#   ncu -i R.ncu-rep --page raw --csv > raw.csv
# A deadline ($DEADLINE seconds from the start, default 450) skips what is left, so that the archives
# are always written. OWN and IMPACT (globs relative to the root; defaults as above, empty: none)
# choose the programs, e.g. IMPACT='bench/impact/heldout_*.cu' OWN= for issue 28's held-out set;
# B is the build folder (default build-prof-programs; binaries already there are kept); PROGRAM_LIMIT
# the most seconds one program may run under ncu (default 140).
set -uo pipefail
OUT=${OUT:?set OUT}
ROOT=$(pwd)
NCU=${NCU:-$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CORPUS=${CORPUS:-}
DEADLINE=${DEADLINE:-450}
START=$(date +%s)
B=${B:-$ROOT/build-prof-programs}
OWN=${OWN-tests/data/ncu/programs/*.cu}
IMPACT=${IMPACT-bench/impact/*.cu}
shopt -s nullglob
# shellcheck disable=SC2206
OWN_FILES=($OWN)
# shellcheck disable=SC2206
IMPACT_FILES=($IMPACT)
mkdir -p "$OUT/own" "$OUT/impact" "$OUT/corpus" "$B"
left() { echo $((DEADLINE - ($(date +%s) - START))); }

{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  echo "ncu: $NCU"; "$NCU" --version 2>&1 | tail -1
  "$NVCC" --version 2>&1 | tail -1
  echo "root: $ROOT"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt"

# Build: our programs first (in parallel), the corpus in the background while they are profiled.
build() {  # build NAME SOURCES... [-- EXTRA FLAGS]; a binary newer than its sources is kept (built here)
  local name=$1; shift
  local srcs=() flags=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do srcs+=("$1"); shift; done
  [ $# -gt 0 ] && shift && flags=("$@")
  if [ -x "$B/$name" ] && [ -z "${REBUILD:-}" ]; then echo "prebuilt $name"; return; fi
  if "$NVCC" -lineinfo -arch=sm_90 -O3 "${flags[@]}" -o "$B/$name" "${srcs[@]}" > "$B/$name.log" 2>&1; then
    echo "built $name"
  else
    echo "BUILD FAILED $name"; tail -5 "$B/$name.log"
  fi
}
for f in "${OWN_FILES[@]}" "${IMPACT_FILES[@]}"; do
  build "$(basename "$f" .cu)" "$ROOT/$f" &
done
wait
CORPUS_BUILD=
if [ -n "$CORPUS" ] && [ -f "$CORPUS/programs.txt" ]; then
  # programs.txt: NAME DIR SOURCE... [-- FLAGS...] per line, DIR relative to $CORPUS
  (
    while read -r name dir rest; do
      [ -z "$name" ] && continue
      # shellcheck disable=SC2086
      (cd "$CORPUS/$dir" && build "$name" $rest) &
      while [ "$(jobs -r | wc -l)" -ge 12 ]; do sleep 0.5; done
    done < "$CORPUS/programs.txt"
    wait
  ) > "$OUT/corpus/build.txt" 2>&1 &
  CORPUS_BUILD=$!
fi

# profile KIND NAME LIMIT [SECTIONS...]: runs $B/NAME under ncu in its own folder under $OUT/KIND.
profile() {
  local kind=$1 name=$2 limit=$3; shift 3
  local d="$OUT/$kind/$name" t
  t=$(left)
  if [ "$t" -lt 20 ]; then echo "SKIPPED $kind/$name (deadline)"; echo "skipped: deadline" > "$OUT/$kind/$name.skipped"; return; fi
  [ -x "$B/$name" ] || { echo "NOT BUILT $kind/$name"; return; }
  mkdir -p "$d"
  # what `gpuopt-lint profile --out` keeps beside the pages: the launch limit and kernel filter used
  printf '{"launchCount": %s, "kernelFilter": ""}\n' "$limit" > "$d/gpuopt-profile.json"
  local t0; t0=$(date +%s)
  ( cd "$B" && timeout "$((t < ${PROGRAM_LIMIT:-140} + 10 ? t - 10 : ${PROGRAM_LIMIT:-140}))" "$NCU" --section SourceCounters --section LaunchStats --section SpeedOfLight "$@" \
      --import-source yes -c "$limit" -f -o "$d/report" "./$name" ) > "$d/ncu.log" 2>&1
  echo "rc=$?" >> "$d/ncu.log"
  if [ ! -f "$d/report.ncu-rep" ] && [ "${*: -1}" = yes ] && grep -qi kill "$d/ncu.log"; then  # an ncu without --kill
    ( cd "$B" && timeout 100 "$NCU" --section SourceCounters --section LaunchStats --section SpeedOfLight \
        --import-source yes -c "$limit" -f -o "$d/report" "./$name" ) >> "$d/ncu.log" 2>&1
    echo "rc=$? (again without --kill)" >> "$d/ncu.log"
  fi
  if [ -f "$d/report.ncu-rep" ]; then
    "$NCU" -i "$d/report.ncu-rep" --page source --csv --print-source cuda,sass > "$d/source.csv" 2> "$d/export.err"
    "$NCU" -i "$d/report.ncu-rep" --page raw --csv > "$d/raw.csv" 2>> "$d/export.err"
    rm -f "$d/report.ncu-rep"
  fi
  echo "profiled $kind/$name in $(( $(date +%s) - t0 )) s: $(tail -1 "$d/ncu.log"), source.csv $(wc -c < "$d/source.csv" 2>/dev/null || echo -) bytes"
}

# Issue 30's programs: the sections `gpuopt-lint profile` uses, its default launch limit (20).
# Issue 28's kernels: stall reasons and memory tables too. ONLY=PREFIX: only the corpus programs
# whose name starts with PREFIX (a second recording of what the deadline skipped).
if [ -z "${ONLY:-}" ]; then
  for f in "${OWN_FILES[@]}"; do profile own "$(basename "$f" .cu)" 20; done
  for f in "${IMPACT_FILES[@]}"; do profile impact "$(basename "$f" .cu)" 50 --section WarpStateStats --section MemoryWorkloadAnalysis; done
fi

# Third-party programs (not committed): `profile`'s sections, at most 10 launches, ended then.
if [ -n "$CORPUS_BUILD" ]; then
  wait "$CORPUS_BUILD"
  cat "$OUT/corpus/build.txt"
  while read -r name dir rest; do
    [ -z "$name" ] && continue
    [ -n "${ONLY:-}" ] && [ "${name#"$ONLY"}" = "$name" ] && continue
    profile corpus "$name" 10 --kill yes
  done < "$CORPUS/programs.txt"
fi

cd "$OUT" || exit 1
export XZ_OPT=-T0
tar cJf own.tar.xz machine.txt own
tar cJf impact.tar.xz machine.txt impact
[ -n "$CORPUS" ] && tar cJf corpus.tar.xz machine.txt corpus
rm -rf own impact corpus
ls -la "$OUT"
echo "total $(( $(date +%s) - START )) s"
