#!/usr/bin/env bash
# The release process (`make release`): checks that the version is the same everywhere a user
# reads it, builds the .deb (make release does, before this runs) and creates the tag v<version>
# that the README's pre-commit and GitHub Action snippets pin.
#   scripts/release.sh [BUILD]     check, then tag v<version> at HEAD (annotated)
#   scripts/release.sh --check     only the checks (run by the test suite on every change)
#   scripts/release.sh --tag-only  check and tag without the .deb (the tests use it in a clone)
# To release X.Y.Z: set `project(gpuopt-lint VERSION X.Y.Z)` in CMakeLists.txt, add an entry to
# packaging/debian/changelog, change the pins in README.md, commit, `make release`, then push the
# tag and attach the .deb to the GitHub release (the commands are printed at the end).
set -euo pipefail
mode=release
case ${1:-} in --check) mode=check; shift ;; --tag-only) mode=tag; shift ;; esac
build=${1:-build}
cd "$(dirname "$0")/.."
version=$(sed -nE 's/^project\(gpuopt-lint VERSION ([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' CMakeLists.txt)
[ -n "$version" ] || { echo "release: no version in CMakeLists.txt"; exit 1; }
bad=0
fail() { echo "release: $*"; bad=1; }
# The Debian changelog's latest entry (a native package: the version has no Debian revision).
top=$(sed -nE '1s/^gpuopt-lint \(([^)]*)\).*/\1/p' packaging/debian/changelog)
[ "$top" = "$version" ] || fail "packaging/debian/changelog's latest entry is '$top', the project is $version (add an entry)"
# Every version pinned in the README: the pre-commit rev, the action's @ref, the .deb's name.
while IFS= read -r pin; do
  [ "$pin" = "$version" ] || fail "README.md pins $pin, the project is $version: $(grep -n -- "$pin" README.md | head -1)"
done < <(grep -oE '(rev: v|gpuopt-lint@v|gpuopt-lint_)[0-9]+\.[0-9]+\.[0-9]+' README.md | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | sort -u)
grep -q "rev: v$version" README.md || fail "README.md's pre-commit snippet does not pin rev: v$version"
[ $bad -eq 0 ] || exit 1
if [ $mode = check ]; then
  echo "release: version $version is consistent (CMakeLists.txt, packaging/debian/changelog, README.md)"
  exit 0
fi
[ -z "$(git status --porcelain --untracked-files=no)" ] || { echo "release: the working tree has uncommitted changes"; exit 1; }
if git rev-parse -q --verify "refs/tags/v$version" >/dev/null; then
  echo "release: tag v$version exists already (at $(git rev-parse --short "v$version^{commit}")); bump the version"
  exit 1
fi
deb=""
if [ $mode = release ]; then
  deb=$build/gpuopt-lint_${version}_amd64.deb
  [ -f "$deb" ] || { echo "release: $deb is missing (make release builds it)"; exit 1; }
  sha256sum "$deb" > "$deb.sha256"
fi
git tag -a "v$version" -m "gpuopt-lint $version"
echo "release: tagged v$version at $(git rev-parse --short HEAD)"
echo "release: publish with: git push origin v$version"
[ -z "$deb" ] || echo "release:   gh release create v$version $deb $deb.sha256 --title 'gpuopt-lint $version' --notes-file <(sed -n '/^ --/q;p' packaging/debian/changelog)"
