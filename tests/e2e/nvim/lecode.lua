-- lecode-ls in Neovim 0.11+: the configuration docs/editors/neovim.md shows, verbatim.
-- tests/e2e/test_neovim.py loads this file, so a change that breaks it fails the test suite.

if vim.fn.executable('lecode-ls') == 0 then
  vim.notify('lecode-ls is not on PATH: run `uv tool install .` in a clone of lecode-ls (see its README)',
    vim.log.levels.ERROR)
end

vim.lsp.config('lecode', {
  cmd = { 'lecode-ls' },
  -- No `filetypes`: attach to every file. One client serves each Git checkout; a file outside
  -- Git belongs to the folder Neovim was started in. Unnamed (scratch) buffers get none.
  root_dir = function(bufnr, on_dir)
    if vim.api.nvim_buf_get_name(bufnr) ~= '' then
      on_dir(vim.fs.root(bufnr, '.git') or vim.fn.getcwd())
    end
  end,
  -- lecode-ls sends its own notifications only to a client that names them: the drift news
  -- handled below, and the chat's stream (the :Chat command further down).
  init_options = { notifications = { 'lecode/anchors/didChange', 'lecode/chat/delta' } },
  handlers = {
    ['lecode/anchors/didChange'] = function()
      vim.lsp.codelens.refresh()
    end,
  },
})
vim.lsp.enable('lecode')

-- Facts anchored to code: drift diagnostics show by themselves; the CodeLens naming each anchored
-- fact is fetched on these events. On a flagged line `gra` (vim.lsp.buf.code_action()) offers
-- Correct / Forget / Re-anchor; select lines with `V`, then `gra`, for "Remember selection as
-- fact". A forget asks first (Forget / Cancel) and is done when you answer.
vim.api.nvim_create_autocmd({ 'LspAttach', 'BufEnter', 'InsertLeave', 'TextChanged' }, {
  callback = function(ev)
    if #vim.lsp.get_clients({ bufnr = ev.buf, name = 'lecode' }) > 0 then
      vim.lsp.codelens.refresh({ bufnr = ev.buf })
    end
  end,
})

-- :Memory show | notes | search <pattern> | log [YYYY-MM-DD] | edit | help
-- Runs the server's `lecode.memory` command and shows its output in a scratch window.
vim.api.nvim_create_user_command('Memory', function(opts)
  local client = vim.lsp.get_clients({ bufnr = 0, name = 'lecode' })[1]
  if not client then
    vim.notify('lecode-ls is not attached to this buffer', vim.log.levels.WARN)
    return
  end
  local params = { command = 'lecode.memory', arguments = { opts.args } }
  client:request('workspace/executeCommand', params, function(err, output)
    if err then
      vim.notify('lecode.memory: ' .. err.message, vim.log.levels.ERROR)
      return
    end
    vim.cmd('botright new')
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile = 'nofile', 'wipe', false
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(output, '\n'))
    vim.bo[buf].modifiable = false
  end, 0)
end, { nargs = '+', desc = 'lecode-ls: /memory' })
