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
import { providersOfV2, setupV2, type V2ModelFailedResult, type V2PluginContext, type V2Services } from "./v2.js";

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

/** OpenCode 2's agents (`ctx.agent.list()`: Agent.Info {id, mode, hidden}, as an array or under data/items) as 1.x's `app.agents()` answer. */
function agentsOfV2(res: unknown): { data: Array<{ name: string; mode: unknown; hidden: unknown }> } {
  const r = res as { data?: unknown; items?: unknown } | null | undefined;
  const list = Array.isArray(res) ? res : Array.isArray(r?.data) ? r.data : Array.isArray(r?.items) ? r.items : [];
  const data = [];
  for (const a of list as Array<Record<string, unknown> | null>) {
    const name = typeof a?.id === "string" ? a.id : typeof a?.name === "string" ? a.name : undefined;
    if (name) data.push({ name, mode: a!.mode, hidden: a!.hidden });
  }
  return { data };
}

/**
 * The 1.x client the shim's parts know, built from a v2 context: the agent
 * list, and the provider list from ctx.model (no app log, no toasts).
 */
function clientOf(ctx: V2PluginContext): unknown {
  const client: Record<string, unknown> = {};
  const list = ctx.agent?.list;
  if (typeof list === "function") client.app = { agents: async () => agentsOfV2(await list.call(ctx.agent)) };
  const model = ctx.model;
  if (typeof model?.list === "function") {
    client.config = {
      providers: async () => {
        const def = typeof model.default === "function" ? await model.default.call(model).catch(() => undefined) : undefined;
        return providersOfV2(await model.list!.call(model), def);
      },
    };
  }
  return Object.keys(client).length > 0 ? client : undefined;
}

/** The options on OpenCode 2: the subagent tool is the delegation tool unless taskTools says otherwise. */
function optionsOf(ctx: V2PluginContext): Record<string, unknown> {
  const o = ctx.options && typeof ctx.options === "object" ? ctx.options : {};
  return o.taskTools === undefined ? { ...o, taskTools: ["subagent"] } : o;
}

/** The project of a v2 context: `location.directory` (the background service's own directory is the user's home). */
function projectOf(ctx: V2PluginContext): string {
  const d = ctx.location?.directory;
  return typeof d === "string" && d !== "" ? d : process.cwd();
}

/** What the v2 bridge asks of the sidecar beyond the hooks: model.failed, within the hooks' deadline, and the log to tell the user of a switch. */
function servicesOf(instance: ReturnType<typeof createHookwire>): V2Services {
  const sidecar = instance.sidecar;
  if (!sidecar) return {};
  return {
    modelFailed: async (params) => {
      if (!sidecar.capabilities?.methods.includes("model.failed")) return undefined;
      const r = await sidecar.request("model.failed", params as never, instance.settings.timeoutMs);
      return r.ok ? (r.result as V2ModelFailedResult) : undefined;
    },
    note: (what, detail) => instance.trace?.write({ ev: `v2-${what}`, ...detail }),
    tell: (level, message, detail) => instance.log?.say(level, message, detail),
    timeoutMs: instance.settings.timeoutMs,
  };
}

/** This process's hookwire instances on OpenCode 2, one per project: a second setup for the same project shares it. */
const projects = new Map<string, { instance: ReturnType<typeof createHookwire>; users: number }>();

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
  let dir = "";
  let served: { instance: ReturnType<typeof createHookwire>; users: number } | undefined;
  const release = async () => {
    if (!served) return;
    const s = served;
    served = undefined;
    if (--s.users > 0) return;
    if (projects.get(dir) === s) projects.delete(dir);
    await s.instance.dispose().catch(() => {});
  };
  try {
    dir = projectOf(ctx);
    served = projects.get(dir);
    if (served) served.users++;
    else {
      const instance = createHookwire(
        { directory: dir, worktree: dir, client: clientOf(ctx) } as Partial<PluginInput>,
        optionsOf(ctx),
        process.env,
        { host: { generation: 2, version: ctx.app?.version }, entry: "server" },
      );
      served = { instance, users: 1 };
      projects.set(dir, served);
    }
    // The shared instance's dispose is the last user's: each setup's cleanup disposes its registrations.
    const hooks = { ...served.instance.hooks, dispose: release };
    const cleanup = await setupV2(ctx, hooks, servicesOf(served.instance));
    return async () => {
      try {
        await cleanup();
      } catch {
        // setupV2's cleanup releases the instance last; make sure it is released
        await release();
      }
    };
  } catch {
    // A refused registration, a stream that is not iterable: fail open,
    // and stop the sidecar this setup started.
    await release();
    return noop;
  }
}

const plugin = { id: "hookwire", server, setup };

export default plugin;
