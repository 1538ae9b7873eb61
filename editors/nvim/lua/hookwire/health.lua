-- :checkhealth hookwire — the binary, its version, the state file and the
-- observer. Neovim 0.7 reports through require("health").report_*,
-- 0.10 through vim.health.*; 0.8/0.9 have vim.health.report_*.
local M = {}

local function reporter()
  local h = vim.health
  if h == nil or (h.start == nil and h.report_start == nil) then
    h = require("health")
  end
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    info = h.info or h.report_info,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
  }
end

function M.check()
  local r = reporter()
  local hw = require("hookwire")
  r.start("hookwire")

  local bin = hw.config.binary
  if vim.fn.executable(bin) ~= 1 then
    r.error(("binary %q not found"):format(bin), { "install hookwire, or require('hookwire').setup({ binary = '/path/to/hookwire' })" })
    return
  end
  r.ok(("binary: %s"):format(vim.fn.exepath(bin)))
  local version = vim.fn.trim(vim.fn.system({ bin, "version" }))
  if vim.v.shell_error == 0 then
    r.ok("version: " .. version)
  else
    r.warn("`" .. bin .. " version` failed: " .. version)
  end

  -- Ask the observer (starting it if needed) and wait a little.
  local st, err, done = nil, nil, false
  hw.status(function(s, e)
    st, err, done = s, e, true
  end)
  vim.wait(3000, function()
    return done
  end, 20)
  if not done then
    r.error("observer did not answer within 3 s", { "command: " .. table.concat(hw.command(), " ") })
    return
  end
  if err then
    r.error("observer: " .. tostring(err), { "command: " .. table.concat(hw.command(), " ") })
    return
  end
  r.ok(("observer alive (watching with %s)"):format((st.observer or {}).watch or "?"))
  local o = st.observer or {}
  local load = o.lastLoad or "?"
  if load == "ok" then
    r.ok(("state file: %s (%s)"):format(o.file or "?", hw.count((st.store or {}).entries, "entry", "entries")))
  elseif load == "missing" then
    r.info(("state file: %s does not exist yet (no OpenCode session with hookwire ran in this project)"):format(o.file or "?"))
  else
    r.warn(("state file: %s: %s (showing the last good contents)"):format(o.file or "?", load))
  end
end

return M
