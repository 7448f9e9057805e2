-- Drives lecode-ls from Neovim the way a user's config does, and records what came back.
-- Usage: nvim --headless --clean -l drive.lua <config.lua> <out.json> <file> <server cmd...>
-- The JSON written to <out.json> is asserted as a whole by tests/e2e/test_neovim.py.

local config_path, out_path, file = arg[1], arg[2], arg[3]
local cmd = { unpack(arg, 4) }
local TIMEOUT = 20000 -- ms; the pytest side bounds the whole run as well

local result = { notifications = {} }
local exited = false

-- Messages from the :Memory command end up here instead of on a screen.
vim.notify = function(msg, level)
  table.insert(result.notifications, { message = msg, level = level })
end

dofile(config_path)
-- Run the server from the interpreter under test rather than whatever `lecode-ls` is on PATH.
vim.lsp.config('lecode', {
  cmd = cmd,
  on_exit = function(code, signal)
    result.exit = { code = code, signal = signal }
    exited = true
  end,
})

local attached = nil
vim.api.nvim_create_autocmd('LspAttach', {
  callback = function(ev)
    attached = vim.lsp.get_client_by_id(ev.data.client_id)
  end,
})

-- Opening a file in the repo is what starts the server (FileType -> vim.lsp.enable).
vim.cmd.edit(file)
assert(vim.wait(TIMEOUT, function() return attached ~= nil end), 'lecode-ls did not attach')
local client = attached
result.client = {
  name = client.name,
  initialized = client.initialized,
  root_dir = client.root_dir,
  workspace_folders = client.workspace_folders,
  server_info = client.server_info,
}

local function request(method, params)
  local response, err = client:request_sync(method, params, TIMEOUT, 0)
  assert(response, ('%s: %s'):format(method, err))
  return response
end

local function memory_command(text)
  return request('workspace/executeCommand', { command = 'lecode.memory', arguments = { text } })
end

result.write = request('lecode/memory/write', { file = 'notes/nvim.md', content = 'from neovim\n' })
result.read = request('lecode/memory/read', { file = 'notes/nvim.md' })
request('lecode/memory/write', { file = 'MEMORY.md', content = '# Facts\n- edited in nvim\n' })
result.show = memory_command('show')
result.notes = memory_command('notes')
result.malformed = request('lecode/memory/read', { file = 5 })

-- The :Memory user command from the README: its output opens in a scratch window.
local source_win = vim.api.nvim_get_current_win()
vim.cmd('Memory notes')
assert(vim.wait(TIMEOUT, function() return vim.api.nvim_get_current_win() ~= source_win end),
  ':Memory notes opened no window')
local scratch = vim.api.nvim_get_current_buf()
result.user_command = {
  lines = vim.api.nvim_buf_get_lines(scratch, 0, -1, false),
  buftype = vim.bo[scratch].buftype,
}
vim.cmd('close')
vim.cmd('Memory frobnicate')
assert(vim.wait(TIMEOUT, function() return #result.notifications > 0 end),
  ':Memory frobnicate reported nothing')

client:stop()
assert(vim.wait(TIMEOUT, function() return exited end), 'lecode-ls did not exit after shutdown')
result.stopped = client:is_stopped()

local out = assert(io.open(out_path, 'w'))
out:write(vim.json.encode(result))
out:close()
