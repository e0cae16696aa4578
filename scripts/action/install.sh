#!/usr/bin/env bash
# action.yml, step "Install gpuopt-lint". Inputs (environment): INPUT_PACKAGE (a .deb path or URL,
# or empty), INPUT_INSTALL (apt, extract, none), ACTION_REF (the ref the action is used at);
# GITHUB_ACTION_PATH (this repository), RUNNER_TEMP, GITHUB_PATH (the runner's).
set -euo pipefail
src=${GITHUB_ACTION_PATH:?}
tmp=${RUNNER_TEMP:-/tmp}/gpuopt-lint-action
mkdir -p "$tmp"
case ${INPUT_INSTALL:-apt} in
  none)
    command -v gpuopt-lint >/dev/null || { echo "::error::install: none, but gpuopt-lint is not on PATH"; exit 1; }
    gpuopt-lint --version
    exit 0 ;;
  apt | extract) ;;
  *) echo "::error::install must be apt, extract or none (got '$INPUT_INSTALL')"; exit 1 ;;
esac
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
version=$(sed -nE 's/^project\(gpuopt-lint VERSION ([0-9.]+).*/\1/p' "$src/CMakeLists.txt")
deb=${INPUT_PACKAGE:-}
if [ -z "$deb" ] && [ "${ACTION_REF:-}" = "v$version" ]; then
  # Used at a release tag: the release's package (scripts/release.sh builds it for the tag).
  deb="https://github.com/gpuopt-lint/gpuopt-lint/releases/download/v$version/gpuopt-lint_${version}_amd64.deb"
fi
case $deb in
  http://* | https://* | file://*)
    echo "install: downloading $deb"
    command -v curl >/dev/null || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq curl ca-certificates >/dev/null; }
    curl -fsSL -o "$tmp/gpuopt-lint.deb" "$deb" || { echo "::error::install: cannot download $deb"; exit 1; }
    deb=$tmp/gpuopt-lint.deb ;;
  '')
    # A branch or a commit: build the package from this action's source (build dependencies only:
    # scripts/setup.sh without --test installs no test tools).
    echo "install: building the .deb from $src (used at '${ACTION_REF:-?}', not at release tag v$version)"
    make -C "$src" package BUILD="$tmp/build" >"$tmp/build.log" 2>&1 || { tail -50 "$tmp/build.log"; echo "::error::install: building gpuopt-lint failed"; exit 1; }
    deb=$(ls "$tmp"/build/gpuopt-lint_*.deb | head -1) ;;
esac
[ -f "$deb" ] || { echo "::error::install: no package at '$deb'"; exit 1; }
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
if [ "$INPUT_INSTALL" = apt ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "$deb" >/dev/null
else
  rm -rf "$tmp/root"
  dpkg-deb -x "$deb" "$tmp/root"
  echo "$tmp/root/usr/bin" >> "${GITHUB_PATH:?}"
  PATH="$tmp/root/usr/bin:$PATH"
fi
gpuopt-lint --version
