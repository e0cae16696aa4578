#!/usr/bin/env bash
# The README's Neovim set-up, exactly as printed (the block marked `tested: neovim`), as the user's
# init.lua in Debian 12's Neovim (0.7.2): opening a .cu file starts `gpuopt-lint lsp` (found on
# PATH) and shows its diagnostics; a second CUDA buffer is served by the same server.
set -euo pipefail
src=$1 bin=$2
here=$(cd "$(dirname "$0")" && pwd)
command -v nvim >/dev/null || { echo "nvim is not installed (scripts/setup.sh --test installs neovim)"; exit 1; }
nvim --version | head -1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/config/nvim" "$work/proj"
python3 "$here/readme_block.py" "$src/README.md" neovim > "$work/config/nvim/init.lua"
printf 'block-dim: [32, 32]\n' > "$work/proj/.gpuopt-lint.yaml"
cat > "$work/proj/transpose.cu" <<'CU'
__global__ void transpose(float* out, const float* in) {
  __shared__ float tile[32][32];
  int x = threadIdx.x, y = threadIdx.y;
  tile[y][x] = in[y * 32 + x];
  __syncthreads();
  out[y * 32 + x] = tile[x][y];
}
CU
printf '__global__ void k(float* a) {\n  int i = threadIdx.x;\n  a[i] = a[32 * i];\n}\n' > "$work/proj/strided.cu"
cat > "$work/driver.lua" <<'LUA'
local res = { errors = {} }
local function diags()
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
    table.insert(out, { lnum = d.lnum, col = d.col, code = code, source = d.source })
  end
  return out
end
local function wait_diags(what)
  if not vim.wait(120000, function() return #vim.diagnostic.get(0) > 0 end, 100) then
    table.insert(res.errors, 'no diagnostics ' .. what)
  end
  return diags()
end
res.filetype = vim.bo.filetype
res.first = wait_diags('for transpose.cu')
vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('SECOND')))
res.second = wait_diags('for strided.cu')
res.clients = #vim.lsp.get_active_clients()
res.attached = #vim.lsp.buf_get_clients(0)
res.errmsg = vim.v.errmsg
vim.fn.writefile({ vim.fn.json_encode(res) }, os.getenv('DUMP'))
vim.cmd('qa!')
LUA
export PATH="$(cd "$(dirname "$bin")" && pwd):$PATH" HOME="$work" XDG_CONFIG_HOME="$work/config" \
  XDG_DATA_HOME="$work/data" XDG_STATE_HOME="$work/state" XDG_CACHE_HOME="$work/cache"
cd "$work/proj"
SECOND="$work/proj/strided.cu" DUMP="$work/dump.json" timeout 300 \
  nvim --headless -i NONE -n transpose.cu -c "luafile $work/driver.lua" >"$work/nvim.log" 2>&1 || true
[ -s "$work/dump.json" ] || { echo "FAIL: Neovim wrote nothing:"; cat "$work/nvim.log"; exit 1; }
python3 - "$work/dump.json" "$work/nvim.log" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
fails = []
def check(c, what):
    print(("ok   " if c else "FAIL ") + what)
    if not c: fails.append(what)
check(not d["errors"] and not d["errmsg"] and "Error" not in log, "no error: %s %r %s" % (d["errors"], d["errmsg"], log[-2000:]))
check(d["filetype"] == "cuda", "the .cu buffer has filetype cuda")
check(any(x["code"] == "bank-conflict" and x["lnum"] == 5 and x["source"] == "gpuopt-lint" for x in d["first"]),
      "transpose.cu: the bank conflict on line 6 (the configuration's block shape was read): %s" % d["first"])
check(any(x["code"] == "uncoalesced-access" and x["lnum"] == 2 for x in d["second"]), "strided.cu: the uncoalesced load: %s" % d["second"])
check(d["clients"] == 1 and d["attached"] == 1, "one server for both buffers (clients %d, attached %d)" % (d["clients"], d["attached"]))
print("%d failed" % len(fails))
sys.exit(1 if fails else 0)
PY
