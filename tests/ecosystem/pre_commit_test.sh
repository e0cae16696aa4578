#!/usr/bin/env bash
# Runs the real pre-commit against this repository's .pre-commit-hooks.yaml.
set -euo pipefail
repo=$1 bin=$2
command -v pre-commit >/dev/null || { echo "pre-commit is not installed (scripts/setup.sh installs it)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$(dirname "$bin"):$PATH" PRE_COMMIT_HOME="$work/cache" HOME="$work"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
cd "$work" && git init -q proj && cd proj
cat > bad.cu <<'CU'
__global__ void k(float* a) {
  int i = threadIdx.x;
  a[i] = a[32 * i];
}
CU
cat > clean.cu <<'CU'
__global__ void k(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= 2.0f;
}
CU
git add bad.cu clean.cu
set +e
out=$(pre-commit try-repo "$repo" gpuopt-lint --files bad.cu 2>&1); rc=$?
set -e
echo "$out"
[ $rc -ne 0 ] || { echo "FAIL: the hook passed on bad.cu"; exit 1; }
grep -q "uncoalesced-access" <<<"$out" || { echo "FAIL: the finding is not shown"; exit 1; }
grep -q "bad.cu:3:10" <<<"$out" || { echo "FAIL: no location"; exit 1; }
out=$(pre-commit try-repo "$repo" gpuopt-lint --files clean.cu 2>&1) || { echo "$out"; echo "FAIL: the hook failed on clean.cu"; exit 1; }
echo "$out"
grep -q "Passed" <<<"$out" || { echo "FAIL: clean.cu did not pass"; exit 1; }
echo "1 passed, 0 failed"
