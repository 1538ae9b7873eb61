-- Headless test of hookwire.nvim against a real `hookwire serve` (driven
-- here over a pipe, line framing, as the OpenCode shim would) and the real
-- observer the plugin starts. Run by scripts/test-nvim.sh:
--   nvim --headless -u NONE -c "luafile editors/nvim/tests/sessions_test.lua"
-- Environment: HOOKWIRE_BIN, HW_PLUGIN (editors/nvim), HW_PROJECT (the
-- project directory; XDG_STATE_HOME points into a scratch directory),
-- HW_CAPTURE (where the sessions buffer's final text is written).
local bin = assert(os.getenv("HOOKWIRE_BIN"), "HOOKWIRE_BIN")
local plugin = assert(os.getenv("HW_PLUGIN"), "HW_PLUGIN")
local project = assert(os.getenv("HW_PROJECT"), "HW_PROJECT")
local capture = os.getenv("HW_CAPTURE")
if capture == "" then
  capture = nil
end

vim.opt.runtimepath:prepend(plugin)

local failures = 0
local function log(msg)
  io.stdout:write(msg .. "\n")
end
local function check(ok, msg)
  if ok then
    log("ok   " .. msg)
  else
    failures = failures + 1
    log("FAIL " .. msg)
  end
  return ok
end
local function finish()
  require("hookwire").stop()
  if failures > 0 then
    log(("%d check(s) failed"):format(failures))
    vim.cmd("cquit 1")
  end
  log("all checks passed")
  vim.cmd("qall!")
end

-- A failing step must not leave nvim running.
local function guarded(fn)
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    failures = failures + 1
    log("FAIL error: " .. tostring(err))
  end
  finish()
end

-- serve: a real sidecar on the project's state file, driven over a pipe.
local serve = { buf = "", replies = {}, next_id = 0 }
function serve.start()
  serve.job = vim.fn.jobstart({ bin, "serve", "--project", project, "--log-level", "warn" }, {
    on_stdout = function(_, data)
      -- data: the chunk split at newlines; the first piece continues the
      -- last partial line.
      data[1] = serve.buf .. data[1]
      serve.buf = table.remove(data)
      for _, line in ipairs(data) do
        if line ~= "" then
          local msg = vim.fn.json_decode(line)
          if msg.id ~= nil then
            serve.replies[msg.id] = msg
          end
        end
      end
    end,
  })
  assert(serve.job > 0, "cannot start hookwire serve")
end
function serve.call(method, params)
  serve.next_id = serve.next_id + 1
  local id = serve.next_id
  vim.fn.chansend(serve.job, vim.fn.json_encode({ jsonrpc = "2.0", id = id, method = method, params = params }) .. "\n")
  assert(vim.wait(5000, function()
    return serve.replies[id] ~= nil
  end, 5), "no reply from serve to " .. method)
  local r = serve.replies[id]
  assert(r.error == nil, method .. ": " .. vim.inspect(r.error))
  return r.result
end
local function before(callID, agent, taskID)
  local args = { subagent_type = agent, description = "Map the " .. agent .. " work", prompt = "do it" }
  if taskID then
    args.task_id = taskID
  end
  serve.call("tool.execute.before", { input = { tool = "task", sessionID = "ses_parent", callID = callID }, output = { args = args } })
end
local function after(callID, child)
  serve.call("tool.execute.after", {
    input = { tool = "task", sessionID = "ses_parent", callID = callID },
    output = { title = "t", output = '<task id="' .. child .. '" state="completed">\nok\n</task>', metadata = vim.empty_dict() },
  })
end

local function buffer_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

-- waits up to ms for buf to contain text (a plain string); returns the
-- milliseconds it took, or nil.
local function wait_for(buf, text, ms)
  local t0 = vim.loop.hrtime()
  local ok = vim.wait(ms, function()
    return buffer_text(buf):find(text, 1, true) ~= nil
  end, 10)
  if ok then
    return (vim.loop.hrtime() - t0) / 1e6
  end
  return nil
end

local function line_of(buf, text)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if l:find(text, 1, true) then
      return i
    end
  end
end

guarded(function()
  local hw = require("hookwire")
  check(vim.fn.exists(":HookwireSessions") == 0, "no commands before setup (-u NONE loads no plugin/)")
  hw.setup({ binary = bin, project = project, opencode = "echo" })
  check(vim.fn.exists(":HookwireSessions") == 2 and vim.fn.exists(":HookwireStatus") == 2, "setup() defines the commands")
  vim.cmd("runtime plugin/hookwire.lua")
  check(vim.fn.exists(":HookwireSessions") == 2, "plugin/hookwire.lua defines them again without error")

  vim.cmd("HookwireSessions")
  local buf = vim.api.nvim_get_current_buf()
  check(vim.api.nvim_buf_get_name(buf) == "hookwire://sessions", "buffer named hookwire://sessions")
  check(vim.bo[buf].buftype == "nofile", "buftype=nofile")
  check(wait_for(buf, "no remembered task sessions", 3000) ~= nil, "empty list before any task")

  local listed
  hw.list(function(entries, err)
    listed = { entries = entries, err = err }
  end)
  vim.wait(3000, function()
    return listed ~= nil
  end, 10)
  check(listed and listed.err == nil and #listed.entries == 0, "list(callback) gives the entries (none yet)")

  local fired = 0
  vim.api.nvim_create_autocmd("User", {
    pattern = "HookwireSessionsChanged",
    callback = function()
      fired = fired + 1
    end,
  })
  serve.start()
  serve.call("initialize", { protocolVersion = 1, clientInfo = { name = "nvim-test" } })
  serve.call("chat.message", { input = { sessionID = "ses_parent", agent = "orchestrator" }, output = { message = vim.empty_dict(), parts = {} } })

  -- An alias created through the serving sidecar appears.
  before("call_1", "explorer")
  after("call_1", "ses_child_1")
  local ms = wait_for(buf, "exp-1", 2000)
  check(ms ~= nil, "exp-1 appears in hookwire://sessions within 2 s")
  if ms then
    log(("latency exp-1: %.0f ms from tool.execute.after's reply to the buffer"):format(ms))
  end

  -- A later one appears without a manual refresh.
  before("call_2", "oracle")
  after("call_2", "ses_child_2")
  ms = wait_for(buf, "ora-1", 2000)
  check(ms ~= nil, "ora-1 appears without a manual refresh within 2 s")
  if ms then
    log(("latency ora-1: %.0f ms"):format(ms))
  end

  -- A resume shows as running, then a thrown task as error.
  before("call_3", "explorer", "exp-1")
  check(wait_for(buf, "running", 2000) ~= nil, "a resumed task shows running")
  serve.call("chat.messages.transform", { input = vim.empty_dict(), output = { messages = {
    { info = { id = "msg_1", role = "assistant", sessionID = "ses_parent" },
      parts = { { type = "tool", tool = "task", callID = "call_3", state = { status = "error", error = "Provider error: overloaded" } } } },
  } } })
  check(wait_for(buf, "error: Provider error: overloaded", 2000) ~= nil, "a thrown task shows its error")

  check(fired >= 4, ("User HookwireSessionsChanged fired on each change (%d times)"):format(fired))

  -- The prompt cache (PROTOCOL.md 4.8): usage forwarded as OpenCode's
  -- message.updated; the parent's cache read falls twice in a row.
  local function usage(session, id, read, input)
    serve.call("event", { input = { event = { type = "message.updated", properties = { info = {
      id = id, sessionID = session, role = "assistant", providerID = "fake", modelID = "m",
      tokens = { input = input, output = 5, cache = { read = read, write = 0 } },
    } } } } })
  end
  usage("ses_parent", "msg_a1", 0, 100)
  usage("ses_parent", "msg_a2", 300, 100)
  usage("ses_parent", "msg_a3", 200, 200)
  usage("ses_parent", "msg_a4", 100, 300)
  usage("ses_child_1", "msg_c1", 300, 100)
  check(wait_for(buf, "parent ses_parent  46% cached !!2 (unknown)", 3000) ~= nil, "the parent's line shows its cache share and two busts in a row")
  check(wait_for(buf, "75% cached", 3000) ~= nil and line_of(buf, "75% cached") == line_of(buf, "exp-1"), "exp-1's line shows its session's cache share")
  local render_lines = require("hookwire.buffer").render(
    { { parent = "ses_p", agent = "explorer", alias = "exp-1", taskId = "ses_c", label = "x", lastUse = "2026-01-01T00:00:00Z", run = { state = "completed" } } },
    os.time(),
    require("hookwire.buffer").cache_of({ cache = { perSession = {
      { session = "ses_p", requests = 3, cacheShare = 0.5, busts = 1, bustsInARow = 1, lastBust = { cause = "system", byHookwire = true } },
      { session = "ses_c", requests = 0, cacheShare = 0, busts = 0, bustsInARow = 0 },
      vim.NIL,
    } } })
  )
  check(render_lines[2] == "parent ses_p  50% cached !1 (system, hookwire)", "render: a bust marker with its cause: " .. tostring(render_lines[2]))
  check(render_lines[3]:find("cached", 1, true) == nil, "render: no figures before a session's first request")
  -- A subagent OpenCode reports (PROTOCOL.md 4.10): its state and figures
  -- replace the task call's run state on its line, live, and its parent's
  -- line gains the total with its subagents.
  serve.call("event", { input = { event = { type = "session.created", properties = { sessionID = "ses_child_1",
    info = { id = "ses_child_1", parentID = "ses_parent", title = "Map the repo (@explorer subagent)" } } } } })
  serve.call("event", { input = { event = { type = "session.status", properties = { sessionID = "ses_child_1",
    status = { type = "retry", attempt = 2, message = "Rate limit reached", next = 1795993567000 } } } } })
  check(wait_for(buf, "retrying (attempt 2)", 3000) ~= nil and line_of(buf, "retrying (attempt 2)") == line_of(buf, "exp-1"),
    "exp-1's line shows its subagent retrying, from subagents.list")
  check(wait_for(buf, "with subagents (own", 3000) ~= nil and line_of(buf, "with subagents (own") == line_of(buf, "parent ses_parent"),
    "the parent's line shows its total with its subagents and its own")
  serve.call("event", { input = { event = { type = "session.error", properties = { sessionID = "ses_child_1",
    error = { name = "MessageAbortedError", data = { message = "aborted" } } } } } })
  check(wait_for(buf, "cancelled", 3000) ~= nil and line_of(buf, "cancelled") == line_of(buf, "exp-1"), "an interrupt: cancelled, never running")
  local sub = require("hookwire.buffer").subagent_text
  check(sub({ state = "failed", error = "rate limit: slow\nmore", tokens = { input = 10, output = 2 }, cost = 0.0031 }) == "failed: rate limit: slow 12 tok $0.0031",
    "a failure with its reason and figures: " .. sub({ state = "failed", error = "rate limit: slow\nmore", tokens = { input = 10, output = 2 }, cost = 0.0031 }))
  local text = require("hookwire.buffer").cache_text
  check(text({ requests = 3, cacheShare = vim.NIL, noCacheFigures = true, busts = 0 }) == "no cache figures", "a provider without cache figures: said, never 0%")
  check(text({ requests = 1, cacheShare = 0, busts = 0 }) == "0% cached", "a real 0% (writes, no reads) keeps its share")
  check(text({ requests = 3, cacheShare = 4368 / 4380, busts = 0 }) == "99% cached", "a share short of all never reads 100%: " .. text({ requests = 3, cacheShare = 4368 / 4380, busts = 0 }))

  -- Mappings on the exp-1 line.
  local ln = line_of(buf, "exp-1")
  vim.api.nvim_win_set_cursor(0, { ln, 0 })
  vim.cmd("normal y")
  check(vim.fn.getreg('"') == "exp-1", "y yanks the alias")
  vim.cmd("normal Y")
  check(vim.fn.getreg('"') == "ses_child_1", "Y yanks the session id")
  vim.cmd("normal o")
  local term = vim.api.nvim_get_current_buf()
  check(term ~= buf and vim.bo[term].buftype == "terminal", "o opens a terminal split")
  check(wait_for(term, "--session ses_child_1", 3000) ~= nil, "the terminal runs `opencode --session <id>`")
  vim.cmd("stopinsert")
  vim.cmd("close")

  -- Status and health.
  local st
  hw.status(function(s)
    st = s
  end)
  vim.wait(3000, function()
    return st ~= nil
  end, 10)
  check(st and st.observer and st.observer.lastLoad == "ok", "status: the observer read the state file")
  local status_lines = hw.status_lines({ version = "v", observer = { file = "f", lastLoad = "ok", watch = "w" }, store = { entries = 1, parents = 1 } })
  check(status_lines[2] == "last read: ok; 1 entry under 1 parent; watch: w", "status: singular counts: " .. vim.inspect(status_lines))
  status_lines = hw.status_lines({ observer = {}, store = { entries = 3, parents = 2 } })
  check(status_lines[2]:find("3 entries under 2 parents", 1, true) ~= nil, "status: plural counts: " .. vim.inspect(status_lines))
  vim.cmd("checkhealth hookwire")
  local health = buffer_text(vim.api.nvim_get_current_buf())
  check(health:find("observer alive", 1, true) ~= nil, "checkhealth: observer alive")
  check(health:find("state file: ", 1, true) ~= nil, "checkhealth: state file")
  check(health:find("version: ", 1, true) ~= nil, "checkhealth: version")

  -- A model switch (runtime fallback) shows under its entry.
  local lines = require("hookwire.buffer").render({
    { parent = "ses_p", agent = "explorer", alias = "exp-9", label = "l", taskId = "ses_c9", run = { state = "completed" },
      model = { model = "fake/fake-model-2" },
      switches = { { from = "fake/fake-model-3", to = "fake/fake-model-2", reason = "rate-limit: slow\nmore", at = "2026-12-01T10:00:00Z" } } },
  }, os.time())
  check(vim.tbl_contains(lines, "    switched fake/fake-model-3 -> fake/fake-model-2: rate-limit: slow"),
    "render: a switch shows under its entry: " .. vim.inspect(lines))

  if capture then
    local f = io.open(capture, "w")
    f:write(buffer_text(buf), "\n")
    f:close()
  end
  vim.fn.chanclose(serve.job, "stdin")
end)
