#!/usr/bin/env bash
# ctest fixture "deb": builds the .deb once with cpack from the build tree into OUT, for the tests
# that check it (deb_package, lintian, github_action).
set -euo pipefail
build=$(cd "$1" && pwd) out=$2
rm -rf "$out" && mkdir -p "$out"
(cd "$out" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1) || {
  cat "$out/cpack.log"; echo "FAIL: cpack"; exit 1; }
rm -rf "$out/_CPack_Packages"
ls -l "$out"/gpuopt-lint_*.deb
