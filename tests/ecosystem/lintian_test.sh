#!/usr/bin/env bash
# Debian's lintian on the .deb (ctest fixture "deb"). Errors and warnings fail the test: a warning
# we choose to accept must be overridden in packaging/debian/lintian-overrides with the reason
# (none is, today). Informational and pedantic tags are printed, not failed on.
set -euo pipefail
deb=$(ls "$1"/gpuopt-lint_*.deb)
command -v lintian >/dev/null || { echo "lintian is not installed (scripts/setup.sh --test installs it)"; exit 1; }
lintian --version
set +e
out=$(lintian --no-cfg --fail-on error,warning --display-info --show-overrides "$deb" 2>&1); rc=$?
set -e
echo "$out"
grep -vE '^(I|P|N|O): |running with root privileges' <<<"$out" | grep -E '^[EW]: ' && { echo "FAIL: lintian errors or warnings"; exit 1; }
[ $rc -eq 0 ] || { echo "FAIL: lintian exited $rc"; exit 1; }
echo "1 passed, 0 failed"
