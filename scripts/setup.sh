#!/usr/bin/env bash
# Installs the Debian packages gpuopt-lint needs, if any are missing. Says which, in one line.
# Used by `make run` and `make test`; safe to run again (does nothing when all are present).
set -euo pipefail
pkgs=(cmake make g++ clang-22 libclang-22-dev llvm-22-dev libclang-cpp22-dev libfmt-dev
      libgtest-dev libyaml-cpp-dev nlohmann-json3-dev)
# Tools the ecosystem tests drive for real (pre-commit hook test, SARIF validation).
pkgs+=(pre-commit git)
# The editor and toolchain tests: Neovim's LSP client, clang-apply-replacements, the .deb (dpkg-dev:
# dpkg-shlibdeps computes its Depends).
pkgs+=(neovim clang-tools-22 dpkg-dev python3)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm may come from Debian or from another Node.js packaging: check the command, not the package.
command -v npm >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]})); then
  echo "setup: installing missing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all Debian packages present"
fi
# SARIF validator (Microsoft's multitool) for the SARIF tests, from the npm registry, kept inside
# the build folder so nothing global changes. Optional: the SARIF schema test says if it is absent.
tooldir="${1:-build}/tools-npm"
if [ ! -x "$tooldir/node_modules/.bin/sarif-multitool" ] && command -v npm >/dev/null; then
  echo "setup: installing @microsoft/sarif-multitool into $tooldir"
  mkdir -p "$tooldir"
  (cd "$tooldir" && npm install --silent --no-audit --no-fund @microsoft/sarif-multitool >/dev/null 2>&1) \
    || echo "setup: warning: could not install @microsoft/sarif-multitool (SARIF validation test will fail)"
fi
