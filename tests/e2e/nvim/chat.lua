-- :Chat <message>: chat with the model of [provider] in one session per Neovim; the answer
-- streams into a scratch buffer. Memory changes ask first (window/showMessageRequest).
local chat = { session = nil, buf = nil }

local function show(text)
  if not (chat.buf and vim.api.nvim_buf_is_valid(chat.buf)) then
    vim.cmd('botright new')
    chat.buf = vim.api.nvim_get_current_buf()
    vim.bo[chat.buf].buftype, vim.bo[chat.buf].swapfile = 'nofile', false
    vim.cmd('wincmd p')
  end
  local last = vim.api.nvim_buf_line_count(chat.buf)
  local line = vim.api.nvim_buf_get_lines(chat.buf, last - 1, last, false)[1]
  vim.api.nvim_buf_set_lines(chat.buf, last - 1, last, false, vim.split(line .. text, '\n'))
end

vim.lsp.handlers['lecode/chat/delta'] = function(_, delta)
  if delta.kind == 'text' then
    show(delta.text)
  elseif delta.kind == 'toolCall' then
    show('\n[tool ' .. delta.name .. ' ' .. delta.arguments .. ']\n')
  elseif delta.kind == 'error' then
    show('\n[error: ' .. delta.message .. ']\n')
  end
end

vim.api.nvim_create_user_command('Chat', function(opts)
  local client = vim.lsp.get_clients({ bufnr = 0, name = 'lecode' })[1]
  if not client then
    vim.notify('lecode-ls is not attached to this buffer', vim.log.levels.WARN)
    return
  end
  local function send()
    show('\n> ' .. opts.args .. '\n')
    local params = { sessionId = chat.session, text = opts.args }
    client:request('lecode/chat/send', params, function(err, result)
      show(err and ('\n[error: ' .. err.message .. ']\n') or ('\n[' .. result.stopReason .. ']\n'))
    end, 0)
  end
  if chat.session then
    return send()
  end
  client:request('lecode/session/new', { title = 'neovim' }, function(err, result)
    if err then
      return vim.notify('lecode-ls: ' .. err.message, vim.log.levels.ERROR)
    end
    chat.session = result.sessionId
    send()
  end, 0)
end, { nargs = '+', desc = 'lecode-ls: chat' })
