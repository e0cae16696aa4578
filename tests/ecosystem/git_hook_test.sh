#!/usr/bin/env bash
# The plain git pre-commit hook: the README's block is the file installed with the package
# (packaging/git-hooks/pre-commit); in a real repository it refuses a commit with a finding, lets
# a clean one through, handles names with spaces and commits without CUDA files.
set -euo pipefail
src=$1 bin=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/readme_block.py" "$src/README.md" git-hook > "$work/readme-hook"
diff -u "$src/packaging/git-hooks/pre-commit" "$work/readme-hook" || {
  echo "FAIL: the README's hook differs from packaging/git-hooks/pre-commit"; exit 1; }
export PATH="$(cd "$(dirname "$bin")" && pwd):$PATH" HOME="$work" XDG_CACHE_HOME="$work/cache"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
git init -q "$work/p" && cd "$work/p"
install -m 755 "$work/readme-hook" .git/hooks/pre-commit
echo doc > README && git add README && git commit -qm "no CUDA file" || { echo "FAIL: a commit without CUDA files"; exit 1; }
printf '__global__ void k(float* a) {\n  int i = threadIdx.x;\n  a[i] = a[32 * i];\n}\n' > "bad kernel.cu"
git add "bad kernel.cu"
set +e
out=$(git commit -qm bad 2>&1); rc=$?
set -e
echo "$out"
[ $rc -ne 0 ] || { echo "FAIL: the hook let a finding through"; exit 1; }
grep -q "bad kernel.cu:3:10: warning: uncoalesced global load" <<<"$out" || { echo "FAIL: the finding is not shown"; exit 1; }
printf '__global__ void k(float* a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] *= 2.0f;\n}\n' > "bad kernel.cu"
git add "bad kernel.cu"
git commit -qm fixed || { echo "FAIL: the hook refused a clean file"; exit 1; }
echo "1 passed, 0 failed"
