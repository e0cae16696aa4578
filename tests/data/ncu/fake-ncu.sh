#!/bin/sh
# A test double for Nsight Compute's command line: replays the exports recorded on the H100 in this
# folder, so that `gpuopt-lint profile -- COMMAND` (running, exporting, importing, --try-fixes) is
# tested without a GPU. FAKE_NCU_DATA: the folder whose source.csv and raw.csv `-i` prints.
# FAKE_NCU_OUTPUT / FAKE_NCU_RC: what a profiling run prints and returns instead of running COMMAND
# (the recorded ncu output of a failure, ncu-output/*.txt). FAKE_NCU_LOG: where each profiled run
# appends its working directory and COMMAND.
out=""; import=""; page=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;;
    -i) import="$2"; shift ;;
    --page) page="$2"; shift ;;
    -c|-k|--section|--import-source|--metrics|--print-source) shift ;;
    -f|--csv) ;;
    *) break ;;
  esac
  shift
done
if [ -n "$import" ]; then
  case "$page" in
    source) cat "$FAKE_NCU_DATA/source.csv" ;;
    raw) cat "$FAKE_NCU_DATA/raw.csv" ;;
  esac
  exit 0
fi
if [ -n "$FAKE_NCU_OUTPUT" ]; then
  cat "$FAKE_NCU_OUTPUT"
  exit "${FAKE_NCU_RC:-0}"
fi
[ -n "$FAKE_NCU_LOG" ] && echo "$(pwd) $*" >> "$FAKE_NCU_LOG"
"$@"
rc=$?
if [ $rc -ne 0 ]; then echo "==ERROR== The application returned an error code ($rc)."; exit $rc; fi
[ -n "$out" ] && : > "$out.ncu-rep"
exit 0
