#!/usr/bin/env bash
# --export-fixes writes the YAML clang-tidy writes; the real clang-apply-replacements (Debian's
# clang-tools-22) applies it, and the result is what `gpuopt-lint --fix` makes.
set -euo pipefail
bin=$2
car=$(command -v clang-apply-replacements-22 || command -v clang-apply-replacements || true)
[ -n "$car" ] || { echo "clang-apply-replacements-22 is not installed (scripts/setup.sh installs clang-tools-22)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/a" "$work/b" "$work/fixes"
cat > "$work/a/k.cu" <<'CU'
#define TILE 32
__global__ void transpose(float* out, const float* in) {
  __shared__ float tile[TILE][TILE];
  __shared__ double acc[32][32];
  int x = threadIdx.x, y = threadIdx.y;
  tile[y][x] = in[y * TILE + x];
  acc[y][x] = 0;
  __syncthreads();
  out[y * TILE + x] = tile[x][y] + acc[x][y];
}
CU
cp "$work/a/k.cu" "$work/b/k.cu"
cd "$work/a"
set +e
"$bin" --block-dim 32,32 --export-fixes "$work/fixes/k.yaml" k.cu >"$work/out.txt" 2>&1; rc=$?
set -e
[ $rc -eq 1 ] || { cat "$work/out.txt"; echo "FAIL: expected findings (exit 1), got $rc"; exit 1; }
cat "$work/fixes/k.yaml"
grep -q "DiagnosticName: *bank-conflict" "$work/fixes/k.yaml" || { echo "FAIL: no bank-conflict diagnostic"; exit 1; }
grep -q "MainSourceFile: *$work/a/k.cu" "$work/fixes/k.yaml" || { echo "FAIL: MainSourceFile is not the absolute path"; exit 1; }
"$car" "$work/fixes"
cd "$work/b" && "$bin" --block-dim 32,32 --fix k.cu >/dev/null 2>&1 || true
diff -u "$work/b/k.cu" "$work/a/k.cu" || { echo "FAIL: clang-apply-replacements and --fix differ"; exit 1; }
grep -q 'tile\[TILE\]\[TILE + 1\]' "$work/a/k.cu" || { cat "$work/a/k.cu"; echo "FAIL: not padded"; exit 1; }
set +e
(cd "$work/a" && "$bin" --block-dim 32,32 --rules bank-conflict k.cu); rc=$?
set -e
[ $rc -eq 0 ] || { echo "FAIL: bank conflicts remain after clang-apply-replacements"; exit 1; }
echo "1 passed, 0 failed"
