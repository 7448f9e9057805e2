-- Chats with lecode-ls from Neovim through the :Chat command of docs/editors/neovim.md, and records what happened.
-- Usage: nvim --headless --clean -l drive_chat.lua <lecode.lua> <chat.lua> <out.json> <file>
--        <base url> <server cmd...>
-- The model is the test's loopback server speaking the OpenAI API (tests/fakes/openai_server.py).

local config_path, chat_path, out_path, file, base_url = arg[1], arg[2], arg[3], arg[4], arg[5]
local cmd = { unpack(arg, 6) }
local TIMEOUT = 20000 -- ms

local result = { asks = {}, notifications = {} }
vim.notify = function(msg, level)
  table.insert(result.notifications, { message = msg, level = level })
end

dofile(config_path)
dofile(chat_path)
vim.lsp.config('lecode', {
  cmd = cmd,
  init_options = {
    provider = { base_url = base_url, model = 'gpt-4o', api_key_env = 'LECODE_TEST_KEY' },
  },
  -- A person answering the permission question: what Neovim's own prompt would return.
  handlers = {
    ['window/showMessageRequest'] = function(_, params)
      table.insert(result.asks, params.message)
      return params.actions[1]
    end,
  },
})

local attached = nil
vim.api.nvim_create_autocmd('LspAttach', {
  callback = function(ev)
    attached = vim.lsp.get_client_by_id(ev.data.client_id)
  end,
})
vim.cmd.edit(file)
assert(vim.wait(TIMEOUT, function() return attached ~= nil end), 'lecode-ls did not attach')

local function chat_text()
  local buf = vim.iter(vim.api.nvim_list_bufs()):find(function(b)
    return vim.bo[b].buftype == 'nofile'
  end)
  return buf and table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') or ''
end

vim.cmd('Chat Remember that we build with make.')
assert(
  vim.wait(TIMEOUT, function() return chat_text():find('%[stop%]') ~= nil end),
  'the chat turn did not end: ' .. chat_text()
)
result.chat = chat_text()
local read = attached:request_sync('lecode/memory/read', { file = 'MEMORY.md' }, TIMEOUT, 0)
result.memory = read and read.result

attached:stop()
vim.wait(TIMEOUT, function() return attached:is_stopped() end)

local out = assert(io.open(out_path, 'w'))
out:write(vim.json.encode(result))
out:close()
