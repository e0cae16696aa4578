#!/usr/bin/env bash
# The Debian package (built by the ctest fixture "deb", cpack_fixture.sh): its Depends name the
# Clang 22 runtime, it carries the man page, bash completion, copyright, changelog and git hook,
# its binaries are stripped and have no RUNPATH, its description names every rule, and the binary
# unpacked with dpkg-deb -x into a temporary root lints a file. Also the plain `cmake --install`.
set -euo pipefail
src=$1 build=$(cd "$2" && pwd) pkgdir=$3
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
  # (Not a pipe into grep -q: with pipefail, the writer's SIGPIPE would fail a long doc.)
  grep -q "bank" <<<"$("$1" --explain bank-conflict)" || { echo "FAIL: $1 --explain has no embedded doc"; exit 1; }
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
# The .deb.
deb=$(ls "$pkgdir"/gpuopt-lint_*.deb)
dpkg-deb -I "$deb"
depends=$(dpkg-deb -f "$deb" Depends)
for p in libclang-cpp22 libclang-common-22-dev libyaml-cpp libfmt; do
  grep -q "$p" <<<"$depends" || { echo "FAIL: Depends lacks $p: $depends"; exit 1; }
done
dpkg-deb -x "$deb" "$work/root"
[ -x "$work/root/usr/bin/gpuopt-lint" ] || { echo "FAIL: the package has no usr/bin/gpuopt-lint"; dpkg-deb -c "$deb"; exit 1; }
check_binary "$work/root/usr/bin/gpuopt-lint"
for f in usr/share/man/man1/gpuopt-lint.1.gz usr/share/bash-completion/completions/gpuopt-lint \
         usr/share/doc/gpuopt-lint/copyright usr/share/doc/gpuopt-lint/changelog.gz \
         usr/share/gpuopt-lint/git-hooks/pre-commit; do
  [ -s "$work/root/$f" ] || { echo "FAIL: the package has no $f"; dpkg-deb -c "$deb"; exit 1; }
done
# The man page is --help's text (help2man), for this version.
zcat "$work/root/usr/share/man/man1/gpuopt-lint.1.gz" | grep -qF 'block\-dim' || { echo "FAIL: the man page lacks --help's options"; exit 1; }
zcat "$work/root/usr/share/man/man1/gpuopt-lint.1.gz" | grep -q "gpuopt-lint $(dpkg-deb -f "$deb" Version)" || {
  echo "FAIL: the man page is not for version $(dpkg-deb -f "$deb" Version)"; exit 1; }
zcat "$work/root/usr/share/doc/gpuopt-lint/changelog.gz" | head -1 | grep -q "^gpuopt-lint ($(dpkg-deb -f "$deb" Version))" || {
  echo "FAIL: the changelog's latest entry is not the package's version"; exit 1; }
# Stripped, no RUNPATH or RPATH.
for b in usr/bin/gpuopt-lint usr/libexec/gpuopt-lint/gpuopt-lint-engine; do
  readelf -S "$work/root/$b" | grep -q '\.symtab' && { echo "FAIL: $b is not stripped"; exit 1; }
  readelf -d "$work/root/$b" | grep -qE 'RUNPATH|RPATH' && { echo "FAIL: $b has a RUNPATH: $(readelf -d "$work/root/$b" | grep -E 'RUNPATH|RPATH')"; exit 1; }
done
# The description names every rule the binary has.
desc=$(dpkg-deb -f "$deb" Description | tr -s ' \n' ' ')
for id in $("$work/root/usr/bin/gpuopt-lint" --list-rules | awk '{print $1}'); do
  grep -qw -- "$id" <<<"$desc" || { echo "FAIL: the package description does not name $id"; exit 1; }
done
echo "1 passed, 0 failed"
