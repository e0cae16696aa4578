#!/usr/bin/env bash
# Runs the real pre-commit against this repository's .pre-commit-hooks.yaml: with try-repo, and
# with the README's .pre-commit-config.yaml as printed, pinned to the tag the release script
# (scripts/release.sh) creates in a copy of this repository.
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

# The release: a copy of the files the release script and pre-commit read, committed and tagged.
up="$work/upstream"
mkdir -p "$up/scripts" "$up/packaging/debian"
for f in .pre-commit-hooks.yaml CMakeLists.txt README.md packaging/debian/changelog scripts/release.sh; do cp "$repo/$f" "$up/$f"; done
git -C "$up" init -q && git -C "$up" add -A && git -C "$up" commit -qm release
out=$(bash "$up/scripts/release.sh" --tag-only 2>&1) || { echo "$out"; echo "FAIL: the release script did not tag"; exit 1; }
echo "$out"
version=$(sed -nE 's/^project\(gpuopt-lint VERSION ([0-9.]+).*/\1/p' "$repo/CMakeLists.txt")
git -C "$up" rev-parse -q --verify "refs/tags/v$version" >/dev/null || { echo "FAIL: no tag v$version"; exit 1; }
if bash "$up/scripts/release.sh" --tag-only >/dev/null 2>&1; then echo "FAIL: the release script tagged v$version twice"; exit 1; fi
# The README's snippet, with the repository URL pointing at the copy; the rev as printed.
python3 "$(dirname "$0")/readme_block.py" "$repo/README.md" pre-commit > .pre-commit-config.yaml
grep -q "rev: v$version\$" .pre-commit-config.yaml || { cat .pre-commit-config.yaml; echo "FAIL: the README does not pin v$version"; exit 1; }
sed -i "s|repo: https://github.com/gpuopt-lint/gpuopt-lint|repo: $up|" .pre-commit-config.yaml
git add .pre-commit-config.yaml
set +e
out=$(pre-commit run --files bad.cu 2>&1); rc=$?
set -e
echo "$out"
[ $rc -ne 0 ] && grep -q "bad.cu:3:10" <<<"$out" || { echo "FAIL: the README's configuration did not report bad.cu"; exit 1; }
out=$(pre-commit run --files clean.cu 2>&1) || { echo "$out"; echo "FAIL: the README's configuration failed on clean.cu"; exit 1; }
echo "2 passed, 0 failed"
