#!/usr/bin/env bash
# action.yml, step "Run gpuopt-lint". Never fails itself: it records gpuopt-lint's exit status and
# the SARIF file as step outputs, so that the SARIF is uploaded whatever the outcome and the last
# step fails the job. Inputs (environment): INPUT_FILES, INPUT_COMPILE_COMMANDS_DIR, INPUT_FAIL_ON,
# INPUT_ARGS, INPUT_SARIF_FILE, INPUT_ANNOTATIONS, INPUT_CHANGED_LINES_ONLY, INPUT_BASELINE, EVENT_NAME,
# BASE_SHA; GITHUB_OUTPUT.
set -uo pipefail
out=${GITHUB_OUTPUT:?}
sarif=${INPUT_SARIF_FILE:-gpuopt-lint.sarif}
args=()
# Word splitting of INPUT_ARGS is intended (several options in one input), globbing is not.
set -f; read -r -a extra <<<"${INPUT_ARGS:-}"; set +f
case ${INPUT_FAIL_ON:-} in
  '') ;;
  never) args+=(--exit-zero) ;;
  note | warning | error) args+=(--fail-on "$INPUT_FAIL_ON") ;;
  *) echo "::error::fail-on must be note, warning, error, never or empty (got '$INPUT_FAIL_ON')"
     { echo "exit-code=2"; echo "sarif-file="; } >>"$out"; exit 0 ;;
esac
[ -z "${INPUT_BASELINE:-}" ] || args+=(--baseline "$INPUT_BASELINE")
files=()
base=""
if [ -n "${INPUT_COMPILE_COMMANDS_DIR:-}" ]; then
  args+=(-p "$INPUT_COMPILE_COMMANDS_DIR")
  echo "lint: every CUDA translation unit of $INPUT_COMPILE_COMMANDS_DIR/compile_commands.json"
else
  mode=${INPUT_FILES:-changed}
  if [ "$mode" = changed ]; then
    git config --global --add safe.directory "$PWD" 2>/dev/null || true
    base=${BASE_SHA:-}
    if [[ $base =~ ^0+$ ]]; then base=""; fi  # a new branch: nothing to compare with
    if [ -n "$base" ] && ! git cat-file -e "$base^{commit}" 2>/dev/null; then
      git fetch --no-tags --quiet --depth=1 origin "$base" 2>/dev/null || true
    fi
    if [ -n "$base" ] && git cat-file -e "$base^{commit}" 2>/dev/null; then
      echo "lint: CUDA files changed since $base ($EVENT_NAME)"
      [ "${INPUT_CHANGED_LINES_ONLY:-false}" != true ] || args+=(--diff "$base")
      while IFS= read -r -d '' f; do files+=("$f"); done < <(git diff -z --name-only --diff-filter=ACMR "$base" HEAD -- '*.cu' '*.cuh')
      if [ ${#files[@]} -eq 0 ]; then
        echo "lint: no CUDA file changed"
        # An empty run still uploads a SARIF (code scanning then closes the fixed alerts).
      fi
    else
      echo "lint: no base commit to compare with ($EVENT_NAME): every tracked CUDA file"
      mode=all
    fi
  fi
  if [ "$mode" = all ]; then
    while IFS= read -r -d '' f; do files+=("$f"); done < <(git ls-files -z -- '*.cu' '*.cuh')
  elif [ "$mode" != changed ]; then
    set -f; read -r -a pats <<<"$mode"; set +f
    shopt -s nullglob globstar
    for p in "${pats[@]}"; do
      m=($p)
      [ ${#m[@]} -gt 0 ] && files+=("${m[@]}") || files+=("$p")  # a missing file is gpuopt-lint's error to report
    done
    shopt -u nullglob globstar
  fi
  if [ ${#files[@]} -eq 0 ]; then
    # Nothing to lint: an empty but valid SARIF, so that the upload and the verdict work as usual.
    printf '%s\n' '{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":[{"tool":{"driver":{"name":"gpuopt-lint","rules":[]}},"results":[]}]}' >"$sarif"
    { echo "exit-code=0"; echo "sarif-file=$sarif"; } >>"$out"
    exit 0
  fi
fi
echo "+ gpuopt-lint --format sarif ${args[*]} ${extra[*]} ${files[*]}"
gpuopt-lint --format sarif "${args[@]}" "${extra[@]}" "${files[@]}" >"$sarif"
rc=$?
# The same run again, as text for the log and as annotations: answered from the result cache.
gpuopt-lint --quiet --color never "${args[@]}" "${extra[@]}" "${files[@]}"
if [ "${INPUT_ANNOTATIONS:-false}" = true ]; then
  gpuopt-lint --format github "${args[@]}" "${extra[@]}" "${files[@]}"
fi
# Exit status 2: an input could not be analysed (or a usage error). The SARIF is still uploaded when
# gpuopt-lint wrote one (it names the problem as a tool notification, and the other files' findings
# are in it); when it wrote nothing usable, there is nothing to upload.
if [ $rc -eq 2 ]; then
  echo "::error::gpuopt-lint could not analyse some input (exit status 2); see the messages above"
fi
if [ -s "$sarif" ] && grep -q '"runs"' "$sarif"; then
  echo "sarif-file=$sarif" >>"$out"
else
  echo "sarif-file=" >>"$out"
fi
echo "exit-code=$rc" >>"$out"
exit 0
