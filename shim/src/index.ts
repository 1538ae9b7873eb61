// The OpenCode plugin module. OpenCode 1.18 takes a default export
// {id, server}; it would treat any other runtime export as a plugin
// function too, so this module exports nothing else (tests import
// plugin.js directly).

import type { Plugin, PluginModule } from "@opencode-ai/plugin";
import { createHookwire } from "./plugin.js";

/** Plugin options: see README.md (binary, args, state, record, timeoutMs, transformTimeoutMs, hungAfterMisses, maxInFlightBytes, maxReplyBytes, logFile, trace; the rest is the sidecar's config). */
const server: Plugin = async (input, options) => createHookwire(input, options).hooks;

const plugin: PluginModule = { id: "hookwire", server };

export default plugin;
