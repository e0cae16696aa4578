#!/usr/bin/env bash
# Installs the Debian packages gpuopt-lint needs, if any are missing. Says which, in one line.
#   scripts/setup.sh [BUILD]          what building the tool and its .deb needs (make run, build-tool,
#                                     package; the GitHub Action's build from source)
#   scripts/setup.sh --test [BUILD]   that, plus the tools the tests drive for real (make test)
# Safe to run again (does nothing when all are present).
set -euo pipefail
mode=build
if [ "${1:-}" = --test ]; then mode=test; shift; fi
pkgs=(cmake make g++ clang-22 libclang-22-dev llvm-22-dev libclang-cpp22-dev libfmt-dev
      libgtest-dev libyaml-cpp-dev nlohmann-json3-dev)
# The man page is generated from --help at build time; dpkg-shlibdeps (dpkg-dev) computes the .deb's
# Depends.
pkgs+=(help2man dpkg-dev)
# Clang's runtime libraries: libFuzzer and the sanitizers' runtimes (make fuzz: -fsanitize=fuzzer).
pkgs+=(libclang-rt-22-dev)
if [ $mode = test ]; then
  # Tools the ecosystem tests drive for real: pre-commit, git, Neovim's LSP client,
  # clang-apply-replacements, lintian on the .deb, bash-completion for the completion script.
  pkgs+=(pre-commit git neovim clang-tools-22 python3 lintian bash-completion)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm may come from Debian or from another Node.js packaging: check the command, not the package.
if [ $mode = test ]; then command -v npm >/dev/null || missing+=(nodejs npm); fi
if ((${#missing[@]})); then
  echo "setup: installing missing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all Debian packages present"
fi
[ $mode = test ] || exit 0
# SARIF validator (Microsoft's multitool) for the SARIF tests, from the npm registry, kept inside
# the build folder so nothing global changes. Optional: the SARIF schema test says if it is absent.
tooldir="${1:-build}/tools-npm"
if [ ! -x "$tooldir/node_modules/.bin/sarif-multitool" ] && command -v npm >/dev/null; then
  echo "setup: installing @microsoft/sarif-multitool into $tooldir"
  mkdir -p "$tooldir"
  (cd "$tooldir" && npm install --silent --no-audit --no-fund @microsoft/sarif-multitool >/dev/null 2>&1) \
    || echo "setup: warning: could not install @microsoft/sarif-multitool (SARIF validation test will fail)"
fi
