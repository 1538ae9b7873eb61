-- hookwire.nvim: the subagent sessions OpenCode's orchestrator delegated,
-- live, from a read-only `hookwire observe` process on the project's state
-- file. Works on Neovim 0.7.2 and 0.10+.
--
-- The observer speaks JSON-RPC 2.0 with Content-Length framing, which is
-- what vim.lsp.rpc.start speaks (jobstart's rpc mode is msgpack). See
-- docs/PROTOCOL.md section 9 and :help hookwire.
local M = {}

local defaults = {
  binary = "hookwire", -- the hookwire executable (on PATH by default)
  project = nil, -- the project directory; nil: the current directory at start
  opencode = "opencode", -- the OpenCode executable `o` runs
}

M.config = vim.deepcopy(defaults)

-- The running observer: its rpc client, whether initialize answered, the
-- calls waiting for it, and the project it was started for.
local state = { client = nil, ready = false, waiting = {}, project = nil, info = nil }

local function notify_err(msg)
  vim.schedule(function()
    vim.notify("hookwire: " .. msg, vim.log.levels.ERROR)
  end)
end

--- The project directory: config.project, else the current directory.
function M.project()
  return vim.fn.fnamemodify(M.config.project or vim.fn.getcwd(), ":p"):gsub("/$", "")
end

--- The command line that starts the observer.
function M.command()
  return { M.config.binary, "observe", "--project", M.project(), "--framing", "header", "--log-level", "warn" }
end

-- start_rpc spawns cmd with vim.lsp.rpc.start, whose signature changed in
-- 0.10: start(cmd, cmd_args, dispatchers, extra) before, start(cmd_list,
-- dispatchers, extra) since.
local function start_rpc(cmd, dispatchers, extra)
  if vim.fn.has("nvim-0.10") == 1 then
    return vim.lsp.rpc.start(cmd, dispatchers, extra)
  end
  local args = vim.list_slice(cmd, 2)
  return vim.lsp.rpc.start(cmd[1], args, dispatchers, extra)
end

-- closing and terminate paper over the client tables: 0.10's has
-- is_closing() and terminate(); 0.7's only its libuv process handle.
local function closing(client)
  if client.is_closing then
    return client.is_closing()
  end
  return client.handle == nil or client.handle:is_closing()
end

local function terminate(client)
  if client.terminate then
    client.terminate()
  elseif client.handle and not client.handle:is_closing() then
    client.handle:kill(15)
  end
end

local function flush_waiting(err)
  local waiting = state.waiting
  state.waiting = {}
  for _, fn in ipairs(waiting) do
    fn(err)
  end
end

-- on_changed handles sessions.changed: every open sessions buffer
-- refreshes, and a User autocmd lets a user's config react too.
local function on_changed(params)
  require("hookwire.buffer").refresh_all()
  vim.api.nvim_exec_autocmds("User", { pattern = "HookwireSessionsChanged", modeline = false })
  return params
end

--- Starts the observer if it is not running. Returns nil and an error
--- message when it cannot start.
function M.start()
  if state.client and not closing(state.client) then
    return state.client
  end
  if vim.fn.executable(M.config.binary) ~= 1 then
    return nil, ("%q not found (set require('hookwire').setup({ binary = ... }))"):format(M.config.binary)
  end
  state.ready, state.info, state.project = false, nil, M.project()
  local client
  local ok, res = pcall(start_rpc, M.command(), {
    notification = function(method, params)
      if method == "sessions.changed" or method == "subagents.changed" then
        on_changed(params)
      end
    end,
    on_exit = function(code, signal)
      vim.schedule(function()
        if state.client == client then
          state.client, state.ready = nil, false
          flush_waiting(("observer exited (code %s, signal %s)"):format(code, signal))
        end
      end)
    end,
  }, { cwd = state.project })
  if not ok or not res then
    return nil, "cannot start the observer: " .. tostring(res)
  end
  client = res
  state.client = client
  client.request("initialize", {
    protocolVersion = 1,
    clientInfo = { name = "hookwire.nvim", version = "0.1.0" },
  }, function(err, result)
    if state.client ~= client then
      return
    end
    if err then
      flush_waiting("initialize failed: " .. vim.inspect(err))
      return
    end
    state.ready, state.info = true, result
    flush_waiting(nil)
  end)
  return client
end

--- Stops the observer.
function M.stop()
  local client = state.client
  state.client, state.ready = nil, false
  if client and not closing(client) then
    client.notify("exit", nil)
    terminate(client)
  end
end

--- Whether the observer runs and answered initialize.
function M.alive()
  return state.client ~= nil and state.ready and not closing(state.client)
end

-- request calls method once the observer is ready; callback(err, result).
local function request(method, params, callback)
  local client, err = M.start()
  if not client then
    callback(err)
    return
  end
  local function send(werr)
    if werr then
      callback(werr)
      return
    end
    state.client.request(method, params, function(rerr, result)
      if rerr then
        callback(rerr.message or vim.inspect(rerr))
        return
      end
      callback(nil, result)
    end)
  end
  if state.ready then
    send(nil)
  else
    table.insert(state.waiting, send)
  end
end

--- Gives the remembered task sessions to callback(entries, err): a list of
--- { parent, agent, alias, taskId, label, lastUse, run = { state, error? },
--- model? }, newest first; entries is nil when err is set.
function M.list(callback)
  request("sessions.list", nil, function(err, result)
    if err then
      callback(nil, err)
    else
      callback(result or {}, nil)
    end
  end)
end

--- Gives a parent's subagents to callback(page, err): subagents.list's
--- result (PROTOCOL.md 4.10), { parent = { own, total, subagents,
--- running }, subagents = { { sessionID, state, tokens, cost, ... } } };
--- an observer without the method gives err.
function M.subagents(parent, callback)
  request("subagents.list", { sessionID = parent, limit = 200 }, function(err, result)
    callback(result, err)
  end)
end

--- Gives the observer's status to callback(status, err).
function M.status(callback)
  request("status", nil, function(err, result)
    callback(result, err)
  end)
end

--- Opens the sessions buffer (hookwire://sessions).
function M.open_sessions()
  require("hookwire.buffer").open()
end

--- "1 entry", "3 entries", "1 parent", "2 parents": n with its noun.
function M.count(n, one, many)
  n = n or 0
  return ("%d %s"):format(n, n == 1 and one or many)
end

--- The lines :HookwireStatus shows for a status result.
function M.status_lines(st)
  local o = st.observer or {}
  return {
    ("hookwire %s observing %s"):format(st.version or "?", o.file or "?"),
    ("last read: %s; %s under %s; watch: %s"):format(
      o.lastLoad or "?",
      M.count((st.store or {}).entries, "entry", "entries"),
      M.count((st.store or {}).parents, "parent", "parents"),
      o.watch or "?"
    ),
  }
end

--- Shows the observer's status in the message area.
function M.show_status()
  M.status(function(st, err)
    if err then
      notify_err(err)
      return
    end
    local lines = M.status_lines(st)
    vim.schedule(function()
      vim.notify(table.concat(lines, "\n"), vim.log.levels.INFO)
    end)
  end)
end

--- Sets the options (binary, project, opencode) and defines the user
--- commands. Changing binary or project restarts the observer on next use.
function M.setup(opts)
  opts = opts or {}
  vim.validate({
    binary = { opts.binary, "string", true },
    project = { opts.project, "string", true },
    opencode = { opts.opencode, "string", true },
  })
  local before = vim.deepcopy(M.config)
  M.config = vim.tbl_extend("force", vim.deepcopy(defaults), opts)
  if state.client and (before.binary ~= M.config.binary or before.project ~= M.config.project) then
    M.stop()
  end
  require("hookwire.commands").define()
  return M
end

return M
