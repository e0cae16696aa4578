#!/usr/bin/env bash
# The Debian package: cpack builds it from the build tree, its Depends name the Clang 22 runtime,
# and the binary unpacked with dpkg-deb -x into a temporary root lints a file. Also the plain
# `cmake --install` into a prefix.
set -euo pipefail
src=$1 build=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/bad.cu" <<'CU'
__global__ void k(float* a) {
  int i = threadIdx.x;
  a[i] = a[32 * i];
}
CU
check_binary() {  # $1: the binary to test
  "$1" --version
  "$1" --explain bank-conflict | grep -q "bank" || { echo "FAIL: $1 --explain has no embedded doc"; exit 1; }
  set +e
  out=$(cd "$work" && "$1" bad.cu 2>&1); rc=$?
  set -e
  echo "$out"
  [ $rc -eq 1 ] || { echo "FAIL: $1 bad.cu exited $rc, expected 1"; exit 1; }
  grep -q "bad.cu:3:10: warning: uncoalesced global load" <<<"$out" || { echo "FAIL: no finding from $1"; exit 1; }
  # The launcher found the installed analyzer (../libexec/gpuopt-lint) above; an unchanged file is
  # then answered without it.
  local cache; cache=$(mktemp -d "$work/cache.XXXX")
  set +e
  (cd "$work" && "$1" --verbose --cache-dir "$cache" bad.cu >/dev/null 2>&1)
  out=$(cd "$work" && "$1" --verbose --cache-dir "$cache" bad.cu 2>&1); rc=$?
  set -e
  [ $rc -eq 1 ] && grep -q "without starting the analyzer" <<<"$out" || {
    echo "$out"; echo "FAIL: $1 did not answer an unchanged file from the result cache"; exit 1; }
}
# cmake --install into a prefix.
cmake --install "$build" --prefix "$work/prefix" >/dev/null
[ -x "$work/prefix/bin/gpuopt-lint" ] || { echo "FAIL: cmake --install did not install bin/gpuopt-lint"; exit 1; }
[ -x "$work/prefix/libexec/gpuopt-lint/gpuopt-lint-engine" ] || {
  echo "FAIL: cmake --install did not install libexec/gpuopt-lint/gpuopt-lint-engine"; exit 1; }
[ -f "$work/prefix/share/doc/gpuopt-lint/rules/bank-conflict.md" ] || { echo "FAIL: rule docs not installed"; exit 1; }
check_binary "$work/prefix/bin/gpuopt-lint"
# cpack: the .deb.
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1) || {
  cat "$work/cpack.log"; echo "FAIL: cpack"; exit 1; }
deb=$(ls "$work"/pkg/*.deb)
dpkg-deb -I "$deb"
depends=$(dpkg-deb -f "$deb" Depends)
for p in libclang-cpp22 libclang-common-22-dev libyaml-cpp libfmt; do
  grep -q "$p" <<<"$depends" || { echo "FAIL: Depends lacks $p: $depends"; exit 1; }
done
dpkg-deb -x "$deb" "$work/root"
[ -x "$work/root/usr/bin/gpuopt-lint" ] || { echo "FAIL: the package has no usr/bin/gpuopt-lint"; dpkg-deb -c "$deb"; exit 1; }
check_binary "$work/root/usr/bin/gpuopt-lint"
echo "1 passed, 0 failed"
