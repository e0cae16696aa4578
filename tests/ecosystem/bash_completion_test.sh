#!/usr/bin/env bash
# The bash completion (packaging/bash-completion/gpuopt-lint) with the real bash-completion library:
# options from --help (aliases too), values of --format and friends, rule ids from --list-rules
# (comma lists, '-' in --checks), CUDA files and folders, folders after -p.
set -uo pipefail
src=$1 bin=$2
[ -f /usr/share/bash-completion/bash_completion ] || { echo "bash-completion is not installed (scripts/setup.sh --test)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$(cd "$(dirname "$bin")" && pwd):$PATH"
# shellcheck disable=SC1091
source /usr/share/bash-completion/bash_completion
# shellcheck disable=SC1091
source "$src/packaging/bash-completion/gpuopt-lint"
fails=0
compopt() { :; }  # bash's builtin works only while bash itself runs a completion
# complete WORD... : COMP_WORDS as bash splits the line (COMP_WORDBREAKS: '=' is a word of its own);
# the last word is the one completed. Prints COMPREPLY sorted, one per line.
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE="${COMP_WORDS[*]}"
  COMP_LINE=${COMP_LINE// = /=}
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  _gpuopt_lint gpuopt-lint "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  printf '%s\n' "${COMPREPLY[@]}" | sort
}
expect() {  # description, expected (newline-separated, sorted), actual
  if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $(tr '\n' ' ' <<<"$2")"; echo "  got:      $(tr '\n' ' ' <<<"$3")"; fails=$((fails + 1)); fi
}
contains() {  # description, word, actual
  if grep -qxF -- "$2" <<<"$3"; then echo "ok   $1"; else echo "FAIL $1: '$2' not in: $(tr '\n' ' ' <<<"$3")"; fails=$((fails + 1)); fi
}
complete -p gpuopt-lint | grep -q _gpuopt_lint && echo "ok   registered for gpuopt-lint" || { echo "FAIL not registered"; fails=$((fails + 1)); }
expect "--form" "--format" "$(complete_words gpuopt-lint --form)"
contains "--sel: the alias named in parentheses" "--select" "$(complete_words gpuopt-lint --sel)"
all=$(complete_words gpuopt-lint -)
for o in --block-dim --fix --dry-run --no-cache --list-rules --explain -p -j -q --help --version --output-format --ignore; do
  contains "'-' offers $o" "$o" "$all"
done
expect "--format VALUE" "$(printf '%s\n' github json sarif text)" "$(complete_words gpuopt-lint --format '')"
expect "--fail-on w" "warning" "$(complete_words gpuopt-lint --fail-on w)"
expect "--rules=bank" "bank-conflict" "$(complete_words gpuopt-lint --rules = bank)"
expect "--disable a,b: the last item" "bank-conflict,uncoalesced-access" "$(complete_words gpuopt-lint --disable bank-conflict,unc)"
expect "--checks x,-y" "bank-conflict,-divergent-branch" "$(complete_words gpuopt-lint --checks bank-conflict,-div)"
n=$(complete_words gpuopt-lint --explain '' | wc -l)
rules=$(gpuopt-lint --list-rules | wc -l)
expect "--explain: every rule ($rules)" "$rules" "$n"
cd "$work" && mkdir sub && touch k.cu h.cuh notes.txt sub/x.cu
expect "files: CUDA sources and folders, subcommands first" "$(printf '%s\n' h.cuh k.cu lsp profile sub)" "$(complete_words gpuopt-lint '')"
expect "files after an option: no subcommands" "$(printf '%s\n' h.cuh k.cu sub)" "$(complete_words gpuopt-lint -q '')"
expect "-p: folders only" "sub" "$(complete_words gpuopt-lint -p '')"
echo "$fails failed"
exit $((fails > 0))
