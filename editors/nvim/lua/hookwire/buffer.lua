-- The hookwire://sessions buffer: one line per remembered task session,
-- grouped under its parent session; refreshed on sessions.changed.
local M = {}

M.name = "hookwire://sessions"

local HELP = '" y: yank alias  Y: yank session id  o/<CR>: open in OpenCode  r: refresh  q: close'

-- entries_by_line[buf][lnum] is the entry shown on that line.
local entries_by_line = {}

-- utc_epoch reads an RFC 3339 UTC time ("2026-11-30T05:52:58.0697Z") as
-- seconds since the epoch; nil if it is not one.
local function utc_epoch(s)
  local y, mo, d, h, mi, sec = tostring(s):match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then
    return nil
  end
  -- os.time reads a table as local time; correct by the zone's offset.
  local t = os.time({ year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi), sec = tonumber(sec) })
  local now = os.time()
  local offset = os.time(os.date("*t", now)) - os.time(os.date("!*t", now))
  return t + offset
end

--- How long ago the RFC 3339 time s was, shortly: "12s", "5m", "3h", "2d".
function M.age(s, now)
  local t = utc_epoch(s)
  if not t then
    return "?"
  end
  local d = math.max(0, (now or os.time()) - t)
  if d < 60 then
    return ("%ds"):format(d)
  elseif d < 3600 then
    return ("%dm"):format(math.floor(d / 60))
  elseif d < 86400 then
    return ("%dh"):format(math.floor(d / 3600))
  end
  return ("%dd"):format(math.floor(d / 86400))
end

local function model_of(e)
  if type(e.model) == "table" and type(e.model.model) == "string" then
    local m = e.model.model
    if type(e.model.variant) == "string" and e.model.variant ~= "" then
      m = m .. " (" .. e.model.variant .. ")"
    end
    return m
  end
  return "-"
end

local function run_of(e)
  local r = type(e.run) == "table" and e.run or {}
  local s = r.state or "?"
  if s == "error" and type(r.error) == "string" and r.error ~= "" then
    s = s .. ": " .. r.error:gsub("\n.*", "")
  end
  return s
end

local function pad(s, n)
  s = tostring(s)
  local w = vim.fn.strdisplaywidth(s)
  if w >= n then
    return s
  end
  return s .. string.rep(" ", n - w)
end

--- A session's prompt-cache figures by session id, from the observer's
--- status (status.cache.perSession, PROTOCOL.md 4.9).
function M.cache_of(status)
  local out = {}
  local c = type(status) == "table" and status.cache
  local per = type(c) == "table" and c.perSession
  if type(per) ~= "table" then
    return out
  end
  for _, p in ipairs(per) do
    if type(p) == "table" and type(p.session) == "string" and p.session ~= "" then
      out[p.session] = p
    end
  end
  return out
end

--- "83% cached", with a bust marker ("!2", "!!2" when the last two busted
--- in a row) and the last bust's cause; "no cache figures" when the
--- provider reported none (every request read and wrote 0: no share to
--- give); "" before any request.
function M.cache_text(c)
  if type(c) ~= "table" or (tonumber(c.requests) or 0) == 0 then
    return ""
  end
  if c.noCacheFigures == true or c.cacheShare == vim.NIL then
    return "no cache figures"
  end
  local share = tonumber(c.cacheShare) or 0
  local p = math.floor(share * 100 + 0.5)
  -- Short of all never reads 100%, above none never 0%.
  if p >= 100 and share < 1 then p = 99 elseif p <= 0 and share > 0 then p = 1 end
  local s = ("%d%% cached"):format(p)
  local busts = tonumber(c.busts) or 0
  if busts > 0 then
    s = s .. " " .. ((tonumber(c.bustsInARow) or 0) >= 2 and "!!" or "!") .. busts
    local last = c.lastBust
    if type(last) == "table" and type(last.cause) == "string" then
      s = s .. " (" .. last.cause .. (last.byHookwire == true and ", hookwire" or "") .. ")"
    end
  end
  return s
end

local function tokens_of(t)
  if type(t) ~= "table" then
    return 0
  end
  local n = 0
  for _, k in ipairs({ "input", "output", "reasoning", "cacheRead", "cacheWrite" }) do
    n = n + (tonumber(t[k]) or 0)
  end
  return n
end

local function cost_text(c)
  return ("$%.4f"):format(tonumber(c) or 0)
end

--- A subagent's state and figures from subagents.list (PROTOCOL.md 4.10):
--- "retrying (attempt 2) 1160 tok $0.0031"; "failed: rate limit: ...".
function M.subagent_text(row)
  if type(row) ~= "table" or type(row.state) ~= "string" then
    return ""
  end
  local s = row.state
  if s == "retrying" and type(row.retry) == "table" and tonumber(row.retry.attempt) then
    s = ("retrying (attempt %d)"):format(tonumber(row.retry.attempt))
  elseif s == "failed" and type(row.error) == "string" and row.error ~= "" then
    s = s .. ": " .. row.error:gsub("\n.*", "")
  end
  local n = tokens_of(row.tokens)
  if n > 0 or (tonumber(row.cost) or 0) > 0 then
    s = s .. (" %d tok %s"):format(n, cost_text(row.cost))
  end
  return s
end

--- A parent's figures, labelled: "total $0.0456 with subagents (own
--- $0.0123), 1 running"; "" when no subagent of it is recorded.
function M.parent_figures_text(p)
  if type(p) ~= "table" then
    return ""
  end
  local total, own = type(p.total) == "table" and p.total or {}, type(p.own) == "table" and p.own or {}
  if (tonumber(p.subagents) or 0) == 0 then
    return "" -- no subagent recorded: no total with subagents to tell from its own
  end
  local s = ("total %s with subagents (own %s)"):format(cost_text(total.cost), cost_text(own.cost))
  if (tonumber(p.running) or 0) > 0 then
    s = s .. (", %d running"):format(tonumber(p.running))
  end
  return s
end

--- The subagents.list pages of several parents as { rows = {[session] =
--- row}, parents = {[parent] = page.parent} }.
function M.subagents_of(pages)
  local out = { rows = {}, parents = {} }
  for _, page in ipairs(pages or {}) do
    if type(page) == "table" then
      if type(page.parent) == "table" and type(page.parent.sessionID) == "string" then
        out.parents[page.parent.sessionID] = page.parent
      end
      for _, row in ipairs(type(page.subagents) == "table" and page.subagents or {}) do
        if type(row) == "table" and type(row.sessionID) == "string" then
          out.rows[row.sessionID] = row
        end
      end
    end
  end
  return out
end

--- The buffer's lines for entries (as sessions.list gives them) and, for
--- each line that shows an entry, that entry. cache (M.cache_of) adds each
--- session's prompt cache: the parent's on its line, a task's at the end of
--- its own. subs (M.subagents_of) puts each subagent's state and figures in
--- place of its run state, and each parent's figures on its line.
function M.render(entries, now, cache, subs)
  cache = cache or {}
  subs = subs or { rows = {}, parents = {} }
  local lines, by_line = { HELP }, {}
  if #entries == 0 then
    table.insert(lines, "(no remembered task sessions yet)")
    return lines, by_line
  end
  -- Parents in the order of their newest entry; entries newest first.
  local parents, rows = {}, {}
  for _, e in ipairs(entries) do
    if not rows[e.parent] then
      rows[e.parent] = {}
      table.insert(parents, e.parent)
    end
    table.insert(rows[e.parent], e)
  end
  local w = { alias = 5, agent = 5, label = 5, model = 5 }
  for _, e in ipairs(entries) do
    w.alias = math.max(w.alias, vim.fn.strdisplaywidth(e.alias or ""))
    w.agent = math.max(w.agent, vim.fn.strdisplaywidth(e.agent or ""))
    w.label = math.min(48, math.max(w.label, vim.fn.strdisplaywidth(e.label or "")))
    w.model = math.max(w.model, vim.fn.strdisplaywidth(model_of(e)))
  end
  for _, p in ipairs(parents) do
    local pc = M.cache_text(cache[p])
    local pf = M.parent_figures_text(subs.parents[p])
    table.insert(lines, "parent " .. p .. (pc ~= "" and "  " .. pc or "") .. (pf ~= "" and "  " .. pf or ""))
    for _, e in ipairs(rows[p]) do
      local ec = M.cache_text(cache[e.taskId])
      local st = M.subagent_text(subs.rows[e.taskId])
      table.insert(lines, ("  %s  %s  %s  %s  %4s  %s%s"):format(
        pad(e.alias, w.alias),
        pad(e.agent, w.agent),
        pad(e.label, w.label),
        pad(model_of(e), w.model),
        M.age(e.lastUse, now),
        st ~= "" and st or run_of(e),
        ec ~= "" and "  " .. ec or ""
      ))
      by_line[#lines] = e
      -- Model switches (runtime fallback), newest last, under their entry.
      for _, sw in ipairs(type(e.switches) == "table" and e.switches or {}) do
        if type(sw) == "table" and type(sw.from) == "string" and type(sw.to) == "string" then
          local why = type(sw.reason) == "string" and sw.reason:gsub("\n.*", "") or ""
          table.insert(lines, ("    switched %s -> %s%s"):format(sw.from, sw.to, why ~= "" and (": " .. why) or ""))
        end
      end
    end
  end
  return lines, by_line
end

local function set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

--- Fetches the entries and redraws buf.
function M.refresh(buf)
  require("hookwire").list(function(entries, err)
    vim.schedule(function()
      if not vim.api.nvim_buf_is_valid(buf) then
        return
      end
      if err then
        set_lines(buf, { HELP, "hookwire: " .. tostring(err) })
        entries_by_line[buf] = {}
        return
      end
      -- The prompt cache comes with status; without it the lines show none.
      require("hookwire").status(function(st)
        vim.schedule(function()
          if not vim.api.nvim_buf_is_valid(buf) then
            return
          end
          M.read_subagents(entries, function(subs)
            vim.schedule(function()
              if not vim.api.nvim_buf_is_valid(buf) then
                return
              end
              local lines, by_line = M.render(entries, nil, M.cache_of(st), subs)
              set_lines(buf, lines)
              entries_by_line[buf] = by_line
            end)
          end)
        end)
      end)
    end)
  end)
end

-- How many parents' subagents a refresh reads (the newest; one
-- subagents.list each).
local MAX_PARENT_FIGURES = 20

--- Reads the subagents of entries' parents (the newest MAX_PARENT_FIGURES)
--- one after the other and gives callback(M.subagents_of(pages)); an
--- observer without subagents.list gives none.
function M.read_subagents(entries, callback)
  local parents, seen = {}, {}
  for _, e in ipairs(entries) do
    if type(e.parent) == "string" and e.parent ~= "" and not seen[e.parent] and #parents < MAX_PARENT_FIGURES then
      seen[e.parent] = true
      table.insert(parents, e.parent)
    end
  end
  local pages = {}
  local function step(i)
    if i > #parents then
      callback(M.subagents_of(pages))
      return
    end
    require("hookwire").subagents(parents[i], function(page, err)
      if err then
        callback(M.subagents_of(pages))
        return
      end
      table.insert(pages, page)
      step(i + 1)
    end)
  end
  step(1)
end

--- Redraws every loaded sessions buffer.
function M.refresh_all()
  for buf in pairs(entries_by_line) do
    if vim.api.nvim_buf_is_valid(buf) then
      M.refresh(buf)
    else
      entries_by_line[buf] = nil
    end
  end
end

local function entry_under_cursor(buf)
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  return (entries_by_line[buf] or {})[lnum]
end

local function yank(text, what)
  vim.fn.setreg('"', text)
  if vim.v.register ~= '"' then
    vim.fn.setreg(vim.v.register, text)
  end
  vim.notify(("hookwire: yanked %s %s"):format(what, text))
end

--- Opens the session of the entry under the cursor in OpenCode, in a
--- terminal split: `opencode --session <id>` (OpenCode 1.18).
function M.open_in_opencode(e)
  local hw = require("hookwire")
  local cmd = { hw.config.opencode, "--session", e.taskId }
  vim.cmd("botright split")
  vim.cmd("enew")
  local opts = { cwd = hw.project() }
  if vim.fn.has("nvim-0.11") == 1 then
    opts.term = true
    vim.fn.jobstart(cmd, opts)
  else
    vim.fn.termopen(cmd, opts)
  end
  vim.cmd("startinsert")
end

local function map(buf, lhs, fn)
  vim.api.nvim_buf_set_keymap(buf, "n", lhs, "", { noremap = true, silent = true, nowait = true, callback = fn })
end

--- Opens hookwire://sessions in the current window (reusing the buffer).
function M.open()
  local buf = vim.fn.bufnr(M.name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, M.name)
  end
  for opt, val in pairs({ buftype = "nofile", bufhidden = "hide", swapfile = false, filetype = "hookwire" }) do
    vim.bo[buf][opt] = val -- nvim_buf_set_option is deprecated since 0.10
  end
  vim.api.nvim_set_current_buf(buf)
  map(buf, "y", function()
    local e = entry_under_cursor(buf)
    if e then
      yank(e.alias, "alias")
    end
  end)
  map(buf, "Y", function()
    local e = entry_under_cursor(buf)
    if e then
      yank(e.taskId, "session id")
    end
  end)
  local open = function()
    local e = entry_under_cursor(buf)
    if e then
      M.open_in_opencode(e)
    end
  end
  map(buf, "o", open)
  map(buf, "<CR>", open)
  map(buf, "r", function()
    M.refresh(buf)
  end)
  map(buf, "q", function()
    vim.cmd("bdelete")
  end)
  if not entries_by_line[buf] then
    entries_by_line[buf] = {}
    set_lines(buf, { HELP, "(loading...)" })
  end
  M.refresh(buf)
  return buf
end

return M
