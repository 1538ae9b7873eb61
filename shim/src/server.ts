// The package's `./server` entry: a default `{id, server, setup}` that both
// plugin generations load (docs/OPENCODE.md, "Every OpenCode version").
//   - OpenCode 1.14+ resolve a package's `./server` export before its main
//     entry and call `server(input, options)`, as with index.ts.
//   - OpenCode 2 resolves `./server` first too, requires a default object
//     `{id, setup}` (a function default is rejected), and calls
//     `setup(ctx)`, bridged to the same hooks by v2.ts.
// Like index.ts, nothing else is exported at run time.

import type { Hooks, PluginInput } from "@opencode-ai/plugin";
import { createHookwire } from "./plugin.js";
import { setupV2, type V2PluginContext } from "./v2.js";

async function server(input: PluginInput, options?: Record<string, unknown>): Promise<Hooks> {
  return createHookwire(input, options, process.env, { entry: "server" }).hooks;
}

/** OpenCode 2: the 1.x hooks built without a 1.x client (no app log, no toasts), registered on v2's context. */
async function setup(ctx: V2PluginContext): Promise<() => Promise<void>> {
  const dir = process.cwd();
  const instance = createHookwire({ directory: dir, worktree: dir } as Partial<PluginInput>, ctx.options, process.env, {
    host: { generation: 2, version: ctx.app?.version },
    entry: "server",
  });
  return setupV2(ctx, instance.hooks);
}

const plugin = { id: "hookwire", server, setup };

export default plugin;
