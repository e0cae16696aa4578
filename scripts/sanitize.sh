#!/usr/bin/env bash
# `make sanitize` (and the second half of `make test`): runs the whole test suite through ctest in
# BUILD, a -DCMAKE_BUILD_TYPE=Sanitize build (AddressSanitizer, LeakSanitizer, UBSan), and fails
# when a test fails OR when any process the tests started (the binary, the language server under
# Neovim, the hooks, ...) wrote a sanitizer report, even if the test that started it passed.
#   scripts/sanitize.sh BUILD [JOBS]
# Reports go to BUILD/sanitizer-logs/report.<pid> (ASan's log_path; with Clang the UBSan checks
# share ASan's runtime and its log) and are printed at the end. Suppressions, each with its reason:
# tests/sanitize/lsan.supp. Tests that cannot run under the sanitizers carry the ctest label
# `no-sanitize` (tests/CMakeLists.txt says why for each); they are left out here.
set -uo pipefail
build=${1:-build-sanitize}
jobs=${2:-2}
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
logs="$build/sanitizer-logs"

# Refuse a build that is not instrumented (the Sanitize flags once silently stayed empty).
if ! nm "$build/bin/gpuopt-lint" 2>/dev/null | grep __asan_report_load >/dev/null; then  # not -q: SIGPIPE under pipefail
  echo "sanitize: $build/bin/gpuopt-lint has no AddressSanitizer instrumentation (not a Sanitize build?)"
  exit 1
fi
rm -rf "$logs"
mkdir -p "$logs"
# exitcode 86: a process stopped by a sanitizer is not mistaken for gpuopt-lint's own exit codes
# (1 findings, 2 errors). halt_on_error: the first UBSan report stops the process (also compiled
# in: -fno-sanitize-recover=undefined).
export ASAN_OPTIONS="log_path=$logs/report:exitcode=86:detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86"
export LSAN_OPTIONS="suppressions=$src/tests/sanitize/lsan.supp:print_suppressions=0"

start=$(date +%s)
(cd "$build" && ctest --output-on-failure -j "$jobs" -LE no-sanitize)
rc=$?
echo "sanitize: ctest took $(($(date +%s) - start)) s (tests labelled no-sanitize left out: $(cd "$build" && ctest -N -L no-sanitize | sed -n 's/^Total Tests: //p'))"

shopt -s nullglob
reports=("$logs"/report.*)
if ((${#reports[@]})); then
  for r in "${reports[@]}"; do
    echo "== sanitizer report $r"
    head -n 80 "$r"
  done
  echo "sanitize: FAIL: ${#reports[@]} sanitizer report(s) above (kept in $logs)"
  exit 1
fi
echo "sanitize: no AddressSanitizer, LeakSanitizer or UBSan report from any process"
exit $rc
