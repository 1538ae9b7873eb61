// The OpenCode 1.x plugin module (docs/OPENCODE.md, "Every OpenCode
// version"). One default export that every 1.x loader takes:
//   - OpenCode 1.0-1.3 call the default export as a function
//     `(input) => Promise<Hooks>`;
//   - OpenCode 1.14+ take a default `{id, server}` (PluginModule) and call
//     `server(input, options)`.
// So the default is the plugin function itself, carrying `id` and `server`
// (the same function) as properties. OpenCode 1.x treats any other runtime
// export as a plugin function too, so this module exports nothing else
// (tests import plugin.js directly). OpenCode 2's entry is server.ts.

import type { Hooks, PluginInput } from "@opencode-ai/plugin";
import { createHookwire } from "./plugin.js";

/** Plugin options: see README.md (binary, args, state, record, timeoutMs, transformTimeoutMs, hungAfterMisses, maxInFlightBytes, maxReplyBytes, logFile, trace; the rest is the sidecar's config). */
async function hookwire(input: PluginInput, options?: Record<string, unknown>): Promise<Hooks> {
  return createHookwire(input, options).hooks;
}

const plugin = Object.assign(hookwire, { id: "hookwire", server: hookwire });

export default plugin;
