-- Drives lecode-ls from Neovim the way a user's config does, and records what came back.
-- Usage: nvim --headless --clean -l drive.lua <config.lua> <out.json> <file> <server cmd...>
-- The JSON written to <out.json> is asserted as a whole by tests/e2e/test_neovim.py.

local config_path, out_path, file = arg[1], arg[2], arg[3]
local cmd = { unpack(arg, 4) }
local TIMEOUT = 20000 -- ms; the pytest side bounds the whole run as well

local result = { notifications = {}, asks = {} }
local exited = false
-- Every lecode/facts/didChange the server sent, in arrival order (see `changing` below).
local fact_changes = {}

-- Messages from the :Memory command end up here instead of on a screen.
vim.notify = function(msg, level)
  table.insert(result.notifications, { message = msg, level = level })
end

dofile(config_path)
-- Run the server from the interpreter under test rather than whatever `lecode-ls` is on PATH.
vim.lsp.config('lecode', {
  cmd = cmd,
  -- A plugin that keeps a view of the facts asks for their news too.
  init_options = { notifications = { 'lecode/anchors/didChange', 'lecode/chat/delta',
    'lecode/facts/didChange', 'lecode/memory/didChange' } },
  -- What a plugin would do to refresh its view of the facts; the README config needs none.
  handlers = {
    ['lecode/facts/didChange'] = function(_, params)
      table.insert(fact_changes, params)
    end,
    -- A person answering the permission question of `/memory forget`: what Neovim's own
    -- prompt would return when they pick "Allow".
    ['window/showMessageRequest'] = function(_, params)
      table.insert(result.asks, params.message)
      return params.actions[1]
    end,
  },
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

-- Transcripts and facts: import a chat, capture evidence, remember, list, recall, forget.
local facts, did_change = {}, {}
result.facts, result.did_change = facts, did_change

-- A fact-changing request, and the lecode/facts/didChange it caused. The server sends that
-- notification just before its response and Neovim runs both callbacks in arrival order, so once
-- the response is back it is the newest one; the bounded wait only guards against a missing one.
local function changing(method, params)
  local before = #fact_changes
  local response = request(method, params)
  assert(vim.wait(TIMEOUT, function() return #fact_changes > before end),
    method .. ': no lecode/facts/didChange')
  return response, fact_changes[#fact_changes]
end

local PREFERENCE = 'We use tabs for indentation in this repo.'
facts.import = request('lecode/session/import', {
  title = 'from neovim',
  records = { -- OpenAI-style messages; the transcript's header takes seq 0, so these are 1-3
    { role = 'user', content = PREFERENCE },
    { role = 'assistant', content = 'Noted: tabs for indentation.' },
    { role = 'user', content = 'Please fix the build.' },
  },
})
local session = assert(facts.import.result, 'lecode/session/import failed').sessionId
-- Evidence: the user's preference and the assistant's reply.
facts.snapshot =
  request('lecode/session/snapshot', { sessionId = session, startSeq = 1, endSeq = 2 })
local source = assert(facts.snapshot.result, 'lecode/session/snapshot failed')
facts.remember, did_change.remember =
  changing('lecode/facts/remember', { text = PREFERENCE, source = source })
-- Empty params must be vim.empty_dict(): Neovim sends {} as the JSON array [] (refused as not an
-- object), and omits `params` for nil, which the server leaves unanswered.
facts.list = request('lecode/facts/list', vim.empty_dict())
facts.recall = request('lecode/facts/recall', { factId = 1 })
facts.command_facts = memory_command('facts')
facts.command_recall = memory_command('recall 1')
facts.forget, did_change.forget = changing('lecode/facts/forget', { factId = 1 })
facts.forget_again = request('lecode/facts/forget', { factId = 1 })
facts.command_forget = memory_command('forget 1')
-- It asked first (Allow, above): its output comes when answered, as window/showMessage, which
-- Neovim echoes into :messages.
assert(vim.wait(TIMEOUT, function()
  return vim.api.nvim_exec2('messages', { output = true }).output:find('already forgotten') ~= nil
end), '/memory forget showed no output')
for _, line in ipairs(vim.split(vim.api.nvim_exec2('messages', { output = true }).output, '\n')) do
  if line:find('already forgotten', 1, true) then
    facts.command_forget_shown = line
  end
end
facts.command_facts_after = memory_command('facts')
-- The very same evidence once more: the forget excluded it for good.
facts.remember_again = request('lecode/facts/remember', { text = PREFERENCE, source = source })

client:stop()
assert(vim.wait(TIMEOUT, function() return exited end), 'lecode-ls did not exit after shutdown')
result.stopped = client:is_stopped()

local out = assert(io.open(out_path, 'w'))
out:write(vim.json.encode(result))
out:close()
