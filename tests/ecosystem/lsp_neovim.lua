-- Drives `gpuopt-lint lsp` from Neovim's built-in LSP client (headless) and dumps what the client
-- received to $DUMP as JSON: the diagnostics published on open, the quick fixes offered, the
-- diagnostics after the fix was applied to the unsaved buffer (didChange), and after :write
-- (didSave). Neovim 0.7 (Debian 12) has vim.lsp.start_client/buf_attach_client (vim.lsp.start
-- is 0.8+), which is what this uses. lsp_neovim_test.sh asserts on the dump.
local bin, file, dump = os.getenv('GPUOPT_LINT'), os.getenv('CU_FILE'), os.getenv('DUMP')
local result = { published = {}, errors = {} }
local function fail(msg)
  table.insert(result.errors, msg)
  vim.fn.writefile({ vim.fn.json_encode(result) }, dump)
  vim.cmd('qa!')
end

vim.cmd('edit ' .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
local published = {}
local client_id = vim.lsp.start_client({
  name = 'gpuopt-lint',
  cmd = { bin, 'lsp' },
  root_dir = vim.fn.fnamemodify(file, ':h'),
  handlers = {
    ['textDocument/publishDiagnostics'] = function(err, params, ctx, config)
      table.insert(published, params)
      return vim.lsp.diagnostic.on_publish_diagnostics(err, params, ctx, config)
    end,
  },
})
if not client_id then return fail('the client did not start') end
vim.lsp.buf_attach_client(buf, client_id)

-- Waits for the next publishDiagnostics after `seen` of them (a parse takes a few seconds).
local function next_publish(seen, what)
  if not vim.wait(90000, function() return #published > seen end, 50) then
    fail('no diagnostics published ' .. what)
    return nil
  end
  return published[#published]
end

local opened = next_publish(0, 'after didOpen')
if not opened then return end
result.published.open = opened
result.client_diagnostics_open = #vim.diagnostic.get(buf)

-- The quick fix for the first finding that has one.
local uri = vim.uri_from_bufnr(buf)
local actions = {}
for _, d in ipairs(opened.diagnostics) do
  local resp = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', {
    textDocument = { uri = uri },
    range = d.range,
    context = { diagnostics = { d } },
  }, 20000)
  for _, r in pairs(resp or {}) do
    for _, a in ipairs(r.result or {}) do table.insert(actions, a) end
  end
  if #actions > 0 then break end
end
result.code_actions = actions
if #actions == 0 then return fail('no code action offered') end

-- Apply it to the buffer, unsaved: the server lints the buffer's text (didChange, debounced).
local before = #published
vim.lsp.util.apply_workspace_edit(actions[1].edit, 'utf-16')
result.buffer_after_fix = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
local changed = next_publish(before, 'after didChange')
if not changed then return end
result.published.change = changed
result.modified_on_disk = vim.fn.readfile(file)

-- Save: didSave lints again.
before = #published
vim.cmd('write')
local saved = next_publish(before, 'after didSave')
if not saved then return end
result.published.save = saved

vim.lsp.stop_client(client_id)
vim.fn.writefile({ vim.fn.json_encode(result) }, dump)
vim.cmd('qa!')
