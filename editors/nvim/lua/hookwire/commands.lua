-- The user commands, defined by setup() and by plugin/hookwire.lua (so
-- they exist with or without either). Defining them again replaces them.
local M = {}

function M.define()
  local cmd = vim.api.nvim_create_user_command
  cmd("HookwireSessions", function()
    require("hookwire").open_sessions()
  end, { desc = "hookwire: the subagent sessions of this project" })
  cmd("HookwireStatus", function()
    require("hookwire").show_status()
  end, { desc = "hookwire: the observer's status" })
end

return M
