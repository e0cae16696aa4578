#!/usr/bin/env bash
# The language server with a real client: Neovim (Debian's, headless) runs lsp_neovim.lua, which
# opens a CUDA file through `gpuopt-lint lsp`, asks for the quick fix, applies it to the unsaved
# buffer and saves; this script asserts on what the client received.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$2
command -v nvim >/dev/null || { echo "nvim is not installed (scripts/setup.sh installs neovim)"; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed to read the dump"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/proj"
# The configuration the server must read, like the command line does: the block shape.
printf 'block-dim: [32, 32]\n' > "$work/proj/.gpuopt-lint.yaml"
cat > "$work/proj/transpose.cu" <<'CU'
// A tile read column-wise: a 32-way bank conflict that padding fixes.
__global__ void transpose(float* out, const float* in) {
  __shared__ float tile[32][32];
  int x = threadIdx.x, y = threadIdx.y;
  tile[y][x] = in[y * 32 + x];
  __syncthreads();
  out[y * 32 + x] = tile[x][y];
}
CU
cp "$work/proj/transpose.cu" "$work/original.cu"
export HOME="$work" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_STATE_HOME="$work/state"
GPUOPT_LINT="$bin" CU_FILE="$work/proj/transpose.cu" DUMP="$work/dump.json" \
  timeout 300 nvim --headless --clean -u NONE -i NONE -n -c "luafile $here/lsp_neovim.lua" >"$work/nvim.log" 2>&1 || {
  echo "nvim failed:"; cat "$work/nvim.log"; exit 1; }
[ -s "$work/dump.json" ] || { echo "FAIL: no dump written"; cat "$work/nvim.log"; exit 1; }
python3 - "$work/dump.json" "$work/original.cu" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
original = open(sys.argv[2]).read().splitlines()
failures = []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond: failures.append(what)
check(not d["errors"], "the script ran to the end: %s" % d["errors"])
if not d["errors"]:
    opened = d["published"]["open"]["diagnostics"]
    bank = [x for x in opened if x.get("code") == "bank-conflict"]
    check(len(bank) == 1, "on open: one bank-conflict diagnostic (got %s)" % [x.get("code") for x in opened])
    b = bank[0]
    # Line 7 (0-based 6) reads tile[x][y]; the range starts at 'tile' (column 21, 0-based 20).
    check(b["range"]["start"] == {"line": 6, "character": 20}, "range starts at the access: %s" % b["range"])
    check(b["severity"] == 2, "severity warning")
    check(b["source"] == "gpuopt-lint", "source is gpuopt-lint")
    check(b["codeDescription"]["href"].endswith("/docs/rules/bank-conflict.md"), "codeDescription links the rule doc")
    check("32-way" in b["message"], "message says how bad: %s" % b["message"][:80])
    rel = b.get("relatedInformation", [])
    check(any("declared here" in r["message"] and r["location"]["range"]["start"]["line"] == 2 and
              r["location"]["uri"].endswith("/proj/transpose.cu") for r in rel),
          "the note ('tile' declared here, line 3) is relatedInformation")
    check(d["client_diagnostics_open"] >= 1, "Neovim accepted the diagnostics")
    acts = d["code_actions"]
    check(len(acts) >= 1 and acts[0]["kind"] == "quickfix", "a quickfix code action is offered")
    edits = list(acts[0]["edit"]["changes"].values())[0]
    check(edits[0]["newText"] == "32 + 1", "the fix pads the array: %s" % edits)
    check(d["buffer_after_fix"][2].strip() == "__shared__ float tile[32][32 + 1];", "the buffer was edited: %s" % d["buffer_after_fix"][2])
    check(d["modified_on_disk"] == original, "the file on disk is unchanged until :write")
    changed = d["published"]["change"]["diagnostics"]
    check(not [x for x in changed if x.get("code") == "bank-conflict"],
          "after the unsaved change, the server linted the buffer: no bank conflict (got %s)" % [x.get("code") for x in changed])
    saved = d["published"]["save"]["diagnostics"]
    check(not [x for x in saved if x.get("code") == "bank-conflict"], "after :write, still none")
print("%d failed" % len(failures))
sys.exit(1 if failures else 0)
PY
