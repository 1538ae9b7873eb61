// The package's `./server` entry: a default `{id, server, setup}` that both
// plugin generations load (docs/OPENCODE.md, "Every OpenCode version").
//   - OpenCode 1.14+ resolve a package's `./server` export before its main
//     entry and call `server(input, options)`, as with index.ts.
//   - OpenCode 2 resolves `./server` first too, requires a default object
//     `{id, setup}` (a function default is rejected), and calls
//     `setup(ctx)`, bridged to the same hooks by v2.ts.
//   - OpenCode 1.17+ call `server()` and then `setup(ctx)` as well, with a
//     registration-only context (no session, tool or event domain): setup
//     recognises it and does nothing, and the `server()` instance serves
//     (docs/OPENCODE.md, "OpenCode 1.17+ calls setup too").
// Like index.ts, nothing else is exported at run time.

import type { Hooks, PluginInput } from "@opencode-ai/plugin";
import { createHookwire } from "./plugin.js";
import { resolveSettings } from "./options.js";
import { Trace } from "./trace.js";
import { setupV2, type V2PluginContext } from "./v2.js";

async function server(input: PluginInput, options?: Record<string, unknown>): Promise<Hooks> {
  return createHookwire(input, options, process.env, { entry: "server" }).hooks;
}

const noop = async (): Promise<void> => {};

/** The shim's trace file from the options or HOOKWIRE_SHIM_TRACE, as resolveSettings reads it; undefined when none or unreadable. */
function traceFile(options: unknown): string | undefined {
  try {
    return resolveSettings(options, process.env, undefined).trace ?? undefined;
  } catch {
    const env = process.env.HOOKWIRE_SHIM_TRACE;
    return env ? env : undefined;
  }
}

/** Why a context cannot be bridged (the domains setupV2 registers on are missing), or undefined when it can. */
function unbridgeable(ctx: unknown): string | undefined {
  const c = ctx as Partial<Record<"session" | "tool" | "event", Record<string, unknown> | undefined>> | null | undefined;
  if (!c || typeof c !== "object") return "no context";
  const missing = [
    typeof c.session?.hook !== "function" && "session.hook",
    typeof c.tool?.hook !== "function" && "tool.hook",
    typeof c.event?.subscribe !== "function" && "event.subscribe",
  ].filter(Boolean);
  return missing.length > 0 ? `the context has no ${missing.join(", ")}` : undefined;
}

/**
 * OpenCode 2: the 1.x hooks built without a 1.x client (no app log, no
 * toasts), registered on v2's context. Never throws into the host: a
 * context it cannot bridge gets a no-op cleanup and no sidecar; a failure
 * after the sidecar started stops that sidecar and answers a no-op cleanup.
 */
async function setup(ctx: V2PluginContext): Promise<() => Promise<void>> {
  const why = unbridgeable(ctx);
  if (why) {
    // OpenCode 1.17+'s registration-only context. It has no client to log
    // to: the one debug line goes to the shim's trace, when there is one.
    try {
      const keys = ctx && typeof ctx === "object" ? Object.keys(ctx).sort() : [];
      const file = traceFile((ctx as { options?: unknown } | undefined)?.options);
      if (file) new Trace(file).write({ ev: "setup-skipped", level: "debug", why, keys });
    } catch {
      // the debug line is best effort
    }
    return noop;
  }
  let instance: ReturnType<typeof createHookwire> | undefined;
  try {
    const dir = process.cwd();
    instance = createHookwire({ directory: dir, worktree: dir } as Partial<PluginInput>, ctx.options, process.env, {
      host: { generation: 2, version: ctx.app?.version },
      entry: "server",
    });
    const cleanup = await setupV2(ctx, instance.hooks);
    return async () => {
      try {
        await cleanup();
      } catch {
        // setupV2's cleanup disposes the sidecar last; make sure it is stopped
        await instance?.dispose().catch(() => {});
      }
    };
  } catch {
    // A refused registration, a stream that is not iterable: fail open,
    // and stop the sidecar this setup started.
    await instance?.dispose().catch(() => {});
    return noop;
  }
}

const plugin = { id: "hookwire", server, setup };

export default plugin;
