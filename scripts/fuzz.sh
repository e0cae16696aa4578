#!/usr/bin/env bash
# `make fuzz`: runs each libFuzzer target of tests/fuzz for SECONDS (default 60) from a copy of its
# seed corpus (the corpus it grows stays in the build folder), ASan and UBSan on. Fails, naming the
# crashing input (kept as BUILD/fuzz/<target>/crash-*), when one is found.
set -euo pipefail
build=${1:-build-fuzz}
seconds=${2:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$build" && pwd)/bin
status=0
for target in jsonrpc result_cache; do
  work="$build/fuzz/$target"
  mkdir -p "$work/corpus"
  cp -n "$src/tests/fuzz/corpus/$target/"* "$work/corpus/" 2>/dev/null || true
  echo "== fuzz_$target for ${seconds} s"
  if ! (cd "$work" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$bin/fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 corpus >"log.txt" 2>&1); then
    echo "FAIL: fuzz_$target found a failure; see $work/log.txt and $work/crash-*"
    tail -40 "$work/log.txt"
    status=1
  fi
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)" "$work/log.txt" | sed "s/^/  /" || true
  echo "  corpus: $(ls "$work/corpus" | wc -l) inputs"
done
exit $status
