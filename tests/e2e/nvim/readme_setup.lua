-- Runs docs/editors/neovim.md's configuration as a user would: `nvim -u <init.lua> <file>` with
-- whatever `lecode-ls` is on PATH (none at all in one test), then `:Memory show`.
-- Usage: nvim --headless -u <init.lua> -c 'luafile readme_setup.lua' <file>, with
-- $LECODE_NVIM_OUT naming the JSON file to write what happened to.
local TIMEOUT = 30000 -- ms; the pytest side bounds the whole run as well
local result = { notifications = {} }

local function finish()
  local out = assert(io.open(os.getenv('LECODE_NVIM_OUT'), 'w'))
  out:write(vim.json.encode(result))
  out:close()
  vim.cmd('qall!')
end

-- init.lua ran before this file: its messages so far are in :messages; later ones come here.
result.startup_messages = vim.api.nvim_exec2('messages', { output = true }).output
vim.notify = function(msg, level)
  table.insert(result.notifications, { message = msg, level = level })
end

local attached = vim.wait(TIMEOUT, function()
  return vim.lsp.get_clients({ bufnr = 0, name = 'lecode' })[1] ~= nil
    and vim.lsp.get_clients({ bufnr = 0, name = 'lecode' })[1].initialized
end)
result.attached = attached
if attached then
  local client = vim.lsp.get_clients({ bufnr = 0, name = 'lecode' })[1]
  result.root_dir = client.root_dir
end

local before = vim.api.nvim_get_current_buf()
vim.cmd('Memory show')
if attached then
  vim.wait(TIMEOUT, function() return vim.api.nvim_get_current_buf() ~= before end)
  result.shown = vim.api.nvim_buf_get_lines(0, 0, -1, false)
end
finish()
