#!/usr/bin/env bash
# action.yml, step "Fail on the configured severity": after the SARIF upload, fails the job with
# gpuopt-lint's exit status (EXIT_CODE).
set -euo pipefail
case ${EXIT_CODE:-} in
  0) echo "gpuopt-lint: no finding at or above the fail-on severity" ;;
  1) echo "::error::gpuopt-lint: findings at or above the fail-on severity (see the log or code scanning)"; exit 1 ;;
  2) echo "::error::gpuopt-lint: an input could not be analysed, or the options are wrong (exit status 2)"; exit 2 ;;
  *) echo "::error::gpuopt-lint did not run to the end (exit status '${EXIT_CODE:-none}')"; exit 1 ;;
esac
