-- Registers the commands only; nothing starts until one is used.
if vim.g.loaded_hookwire then
  return
end
vim.g.loaded_hookwire = 1
require("hookwire.commands").define()
