-- Code anchors in Neovim with no plugin (issue 14): docs/editors/neovim.md's config (lecode.lua) alone.
-- Usage: nvim --headless --clean -l drive_anchors.lua <config.lua> <out.json> <file> <server cmd...>
-- Remembers line 3 of <file> as a person would (`V`, then `gra`, picking "Remember selection as
-- fact"), edits that line in the buffer (unsaved), and records what Neovim itself shows:
-- vim.diagnostic.get() and vim.lsp.codelens.get(); runs the Re-anchor code action and records
-- that the diagnostic went away; edits again and forgets the fact with `gra` "Forget fact #1",
-- answering the question late. Asserted by test_neovim.py.

local config_path, out_path, file = arg[1], arg[2], arg[3]
local cmd = { unpack(arg, 4) }
local TIMEOUT = 20000 -- ms; the pytest side bounds the whole run as well

local result = { events = {} }
local exited = false
local pick = nil -- what the person picks in the next code action menu

dofile(config_path)
vim.lsp.config('lecode', {
  cmd = cmd,
  on_exit = function()
    exited = true
  end,
})

-- The code action menu: the person picks the item whose title starts with `pick`.
vim.ui.select = function(items, opts, on_choice)
  for i, item in ipairs(items) do
    local title = opts.format_item and opts.format_item(item) or tostring(item)
    if title:find(pick, 1, true) == 1 then
      return on_choice(item, i)
    end
  end
  error('no code action ' .. pick)
end

-- Neovim's own question handler shows a prompt; the person answers Forget, a while later.
local default_ask = vim.lsp.handlers['window/showMessageRequest']
assert(default_ask, 'Neovim has no window/showMessageRequest handler')
vim.lsp.handlers['window/showMessageRequest'] = function(_, params)
  table.insert(result.events, 'asked: ' .. params.message)
  vim.wait(1500) -- the person reads the question
  table.insert(result.events, 'answered')
  return { title = 'Forget' }
end
vim.api.nvim_create_autocmd('LspRequest', {
  callback = function(ev)
    local request = ev.data.request
    if request.type == 'complete' and request.method == 'workspace/executeCommand' then
      table.insert(result.events, 'command answered')
    end
  end,
})

local attached = nil
vim.api.nvim_create_autocmd('LspAttach', {
  callback = function(ev)
    attached = vim.lsp.get_client_by_id(ev.data.client_id)
  end,
})

vim.cmd.edit(file)
assert(vim.wait(TIMEOUT, function() return attached ~= nil end), 'lecode-ls did not attach')
local client = attached
local buf = vim.api.nvim_get_current_buf()
local ns = vim.lsp.diagnostic.get_namespace(client.id)

local function request(method, params)
  local response, err = client:request_sync(method, params, TIMEOUT, buf)
  assert(response, ('%s: %s'):format(method, err))
  return response
end

local function facts()
  local ids = {}
  for _, fact in ipairs(request('lecode/facts/list', vim.empty_dict()).result.facts) do
    table.insert(ids, fact.factId)
  end
  return ids
end

local function diagnostics()
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf, { namespace = ns })) do
    table.insert(found, { lnum = d.lnum, source = d.source, code = d.code, message = d.message,
      severity = d.severity })
  end
  return found
end

local function lenses()
  local found = {}
  for _, lens in ipairs(vim.lsp.codelens.get(buf)) do
    table.insert(found, { line = lens.range.start.line, title = lens.command and lens.command.title })
  end
  return found
end

-- `V` on line 3, then `gra` (Neovim 0.11's code action mapping): "Remember selection as fact".
pick = 'Remember selection as fact'
vim.api.nvim_win_set_cursor(0, { 3, 0 })
vim.api.nvim_feedkeys(vim.keycode('Vgra'), 'x', false)
assert(vim.wait(TIMEOUT, function() return #facts() == 1 end), 'V gra remembered nothing')
vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'x', false)
result.remembered = facts()

-- The README config refreshes CodeLens on its own events (here: a refresh as BufEnter does).
vim.lsp.codelens.refresh({ bufnr = buf })
assert(vim.wait(TIMEOUT, function() return #lenses() > 0 end), 'no CodeLens')
result.lenses_before = lenses()

-- The person edits the remembered line (unsaved): Neovim sends an incremental didChange.
vim.api.nvim_buf_set_text(buf, 2, 7, 2, 11, { '9090' })
assert(vim.wait(TIMEOUT, function() return #diagnostics() > 0 end), 'no drift diagnostic')
result.diagnostics = diagnostics()
vim.lsp.codelens.refresh({ bufnr = buf })
assert(vim.wait(TIMEOUT, function()
  local now = lenses()
  return #now > 0 and now[1].title:find('(changed)', 1, true) ~= nil
end), 'the CodeLens did not show the change')
result.lenses_after = lenses()

-- The code actions Neovim's own vim.lsp.buf.code_action() would offer on that line.
local actions = request('textDocument/codeAction', {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = { start = { line = 2, character = 0 }, ['end'] = { line = 2, character = 0 } },
  context = { diagnostics = vim.lsp.diagnostic.from and
    vim.lsp.diagnostic.from(vim.diagnostic.get(buf, { namespace = ns })) or {} },
})
result.actions = {}
local reanchor = nil
for _, action in ipairs(actions.result or {}) do
  table.insert(result.actions, { title = action.title, kind = action.kind,
    command = action.command and action.command.command })
  if action.title:find('Re-anchor', 1, true) then
    reanchor = action
  end
end
assert(reanchor, 'no Re-anchor action')
result.reanchor = request('workspace/executeCommand', reanchor.command)
assert(vim.wait(TIMEOUT, function() return #diagnostics() == 0 end), 'the diagnostic stayed')
result.diagnostics_after = diagnostics()
result.unsaved = vim.bo[buf].modified

-- Drift again, then `gra` on the line: "Forget fact #1". The command answers at once; the
-- question follows and is answered late; the fact is forgotten only then.
vim.api.nvim_buf_set_text(buf, 2, 7, 2, 11, { '7070' })
assert(vim.wait(TIMEOUT, function() return #diagnostics() > 0 end), 'no drift the second time')
result.events = {}
pick = 'Forget fact #1'
vim.api.nvim_win_set_cursor(0, { 3, 0 })
vim.api.nvim_feedkeys(vim.keycode('gra'), 'x', false)
assert(vim.wait(TIMEOUT, function() return #facts() == 0 end), 'the fact was not forgotten')
result.after_answer = facts()
assert(vim.wait(TIMEOUT, function() return #diagnostics() == 0 end), 'the forgotten fact still shows')

client:stop()
assert(vim.wait(TIMEOUT, function() return exited end), 'lecode-ls did not exit after shutdown')
local out = assert(io.open(out_path, 'w'))
out:write(vim.json.encode(result))
out:close()
