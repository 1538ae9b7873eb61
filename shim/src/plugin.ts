// The OpenCode side of the shim: turns each plugin hook into a JSON-RPC call
// to the sidecar and applies the reply's patch to OpenCode's output in place.
//
// OpenCode awaits every hook, has no timeout, and aborts a tool call whose
// hook throws. So every hook here is bounded by a deadline, catches
// everything, and on any failure leaves output exactly as it was.

import { mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Hooks, PluginInput } from "@opencode-ai/plugin";
import { Logger, type AppLogClient } from "./log.js";
import { applyPatchInPlace } from "./patch.js";
import { projectMessages } from "./projection.js";
import { errorText, PROTOCOL_VERSION, Sidecar, type InitializeParams } from "./sidecar.js";
import { hasStateArg, isExecutable, resolveSettings, type ShimSettings } from "./options.js";
import { Trace } from "./trace.js";

/** Sidecar method → OpenCode hook name (PROTOCOL.md section 3). */
export const HOOK_NAMES = {
  "tool.execute.before": "tool.execute.before",
  "tool.execute.after": "tool.execute.after",
  "chat.message": "chat.message",
  "chat.system.transform": "experimental.chat.system.transform",
  "chat.messages.transform": "experimental.chat.messages.transform",
} as const;

export type HookMethod = keyof typeof HOOK_NAMES;

const TRANSFORMS: ReadonlySet<string> = new Set(["chat.system.transform", "chat.messages.transform"]);
const TOOL_HOOKS: ReadonlySet<string> = new Set(["tool.execute.before", "tool.execute.after"]);

const SUBAGENTS_TIMEOUT_MS = 1500;
/** How long an event that came before initialize may wait for it. */
const EVENT_WAIT_MS = 10_000;
const MAX_WAITING_EVENTS = 1000;
/** How long dispose lets such events finish before shutting the sidecar down. */
const DISPOSE_EVENT_WAIT_MS = 3000;

export const SHIM_VERSION = readVersion();

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    return typeof pkg.version === "string" ? pkg.version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** The parts of OpenCode's SDK client the shim uses. */
export type ShimClient = AppLogClient & {
  app?: AppLogClient["app"] & { agents?: () => unknown };
};

export type HookwireInstance = {
  hooks: Hooks;
  settings: ShimSettings;
  sidecar?: Sidecar;
  dispose(): Promise<void>;
};

// Every sidecar of this process, stopped when the process goes away.
const live = new Set<Sidecar>();
let exitHandlersInstalled = false;

function installExitHandlers(): void {
  if (exitHandlersInstalled) return;
  exitHandlersInstalled = true;
  const killAll = () => {
    for (const s of live) s.killNow();
  };
  process.on("exit", killAll);
  for (const sig of ["SIGTERM", "SIGINT"] as const) {
    const onSignal = () => {
      killAll();
      process.off(sig, onSignal);
      // Listening to a signal switches off its default action; restore it
      // when nobody else in the process handles the signal.
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}

/** The names of the agents the orchestrator can delegate to, or undefined when OpenCode does not say. */
export async function fetchSubagents(client: ShimClient | undefined, ms = SUBAGENTS_TIMEOUT_MS): Promise<string[] | undefined> {
  try {
    const agents = client?.app?.agents;
    if (typeof agents !== "function") return undefined;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    });
    const res = await Promise.race([Promise.resolve(agents.call(client!.app)).catch(() => undefined), timeout]);
    clearTimeout(timer);
    const list = Array.isArray(res) ? res : (res as { data?: unknown } | undefined)?.data;
    if (!Array.isArray(list)) return undefined;
    return list
      .filter(
        (a): a is { name: string } =>
          !!a &&
          typeof a.name === "string" &&
          (a.mode === "subagent" || a.mode === "all") &&
          a.hidden !== true,
      )
      .map((a) => a.name);
  } catch {
    return undefined;
  }
}

/** Subagents named in OpenCode's config (agent.<name>.mode subagent or all, not hidden or disabled). */
export function subagentsFromConfig(cfg: unknown): string[] | undefined {
  const agents = (cfg as { agent?: unknown } | null)?.agent;
  if (!agents || typeof agents !== "object") return undefined;
  return Object.entries(agents as Record<string, unknown>)
    .filter(([, a]) => {
      const o = a as { mode?: unknown; hidden?: unknown; disable?: unknown } | null;
      return !!o && (o.mode === "subagent" || o.mode === "all") && o.hidden !== true && o.disable !== true;
    })
    .map(([name]) => name);
}

/**
 * The warning for a `status` result whose state file is not in use, or
 * undefined. Reads `stateFile.mode` (PROTOCOL.md 5); a sidecar too old to
 * send `stateFile` is read from its `state` text instead.
 */
export function stateFileWarning(status: unknown): string | undefined {
  const r = status as { stateFile?: unknown; state?: unknown } | null;
  if (!r || typeof r !== "object") return undefined;
  if (r.stateFile && typeof r.stateFile === "object") {
    const f = r.stateFile as { mode?: unknown; path?: unknown; reason?: unknown };
    if (f.mode !== "memory-only") return undefined;
    const why = [f.path, f.reason].filter((x): x is string => typeof x === "string" && x !== "").join(": ");
    return `hookwire: state file not used, aliases are kept in memory only${why ? ` (${why})` : ""}`;
  }
  if (typeof r.state === "string" && r.state.startsWith("memory-only")) {
    return `hookwire: state file not used, aliases are kept in memory only (${r.state})`;
  }
  return undefined;
}

/**
 * Builds the hooks for one OpenCode instance. Exposed for tests; OpenCode
 * calls `server` in index.ts.
 */
export function createHookwire(
  input: Partial<PluginInput> | undefined,
  options?: unknown,
  env: NodeJS.ProcessEnv = process.env,
): HookwireInstance {
  const client = (input?.client ?? undefined) as ShimClient | undefined;
  const log = new Logger(client);
  const settings = resolveSettings(options, env, input);
  const trace = settings.trace ? new Trace(settings.trace) : undefined;

  if (!settings.binary || !isExecutable(settings.binary)) {
    const where =
      settings.binarySource === "option"
        ? `the plugin option "binary" (${settings.binary})`
        : settings.binarySource === "env"
          ? `HOOKWIRE_BIN (${settings.binary})`
          : '"hookwire" on PATH';
    log.once(
      "no-binary",
      "warn",
      `hookwire: sidecar binary not found via ${where}; hooks pass through unchanged. ` +
        `Set the plugin option "binary" or HOOKWIRE_BIN, or put hookwire on PATH.`,
    );
    trace?.write({ ev: "no-binary", binary: settings.binary, source: settings.binarySource });
    return { hooks: {}, settings, dispose: async () => {} };
  }

  let subagents: string[] | undefined;
  // Fallback when the agents call is slow or fails: the agents OpenCode's
  // config defines (the config hook runs right after plugins load).
  let configSubagents: string[] | undefined;
  const userGaveSubagents = Object.prototype.hasOwnProperty.call(settings.config, "subagents");
  const initParams = async (): Promise<InitializeParams> => {
    const config = { ...settings.config };
    if (!userGaveSubagents) {
      subagents ??= await fetchSubagents(client);
      const names = subagents ?? configSubagents;
      if (names) config.subagents = names;
    }
    return { protocolVersion: PROTOCOL_VERSION, clientInfo: { name: "hookwire-opencode", version: SHIM_VERSION }, config };
  };

  const inspect = async (s: Sidecar, after: string, extra?: Record<string, unknown>) => {
    if (!trace) return;
    // Both leave at once: the sidecar answers in arrival order, so they show
    // the state right after what was sent before them.
    const [status, sessions] = await Promise.all([
      s.request("status", {}, settings.transformTimeoutMs),
      s.request("sessions.list", {}, settings.transformTimeoutMs),
    ]);
    trace.write({ ev: "inspect", after, pid: s.pid, status, sessions, ...extra });
  };

  const args = [...settings.args];
  if (settings.state) {
    try {
      // The user's state directory is private (the file holds session ids
      // and task descriptions); the sidecar writes the file itself, 0600.
      mkdirSync(dirname(settings.state), { recursive: true, mode: 0o700 });
      args.push("--state", settings.state);
    } catch (err) {
      log.once(
        "state-dir",
        "warn",
        `hookwire: cannot create the state directory of ${settings.state} (${errorText(err)}); aliases are kept in memory only`,
      );
    }
  }

  /** Says once in OpenCode's log when the state file is not in use (e.g. another OpenCode holds its lock). */
  const checkState = async (s: Sidecar) => {
    if (!hasStateArg(args)) return;
    const r = await s.request("status", {}, settings.transformTimeoutMs);
    const warning = r.ok ? stateFileWarning(r.result) : undefined;
    if (warning) log.once("state-memory-only", "warn", warning);
  };

  const sidecar = new Sidecar({
    binary: settings.binary,
    args,
    env,
    initParams,
    log,
    trace,
    stderrFile: settings.logFile,
    onReady: (s) => {
      log.log("info", `hookwire: sidecar ready (pid ${s.pid})`, { serverInfo: s.serverInfo, capabilities: s.capabilities, args });
      void inspect(s, "initialize");
      void checkState(s);
    },
  });
  live.add(sidecar);
  installExitHandlers();
  sidecar.start();

  /** One hook call: forward, wait at most the deadline, patch output in place or leave it. */
  const forward = async (method: HookMethod, hookInput: unknown, output: unknown): Promise<void> => {
    try {
      const deadline = TRANSFORMS.has(method) ? settings.transformTimeoutMs : settings.timeoutMs;
      const started = Date.now();
      if (!(await sidecar.whenReady(deadline))) {
        if (sidecar.state !== "failed") log.once(`not-ready:${method}`, "warn", `hookwire: sidecar not ready within ${deadline} ms for ${method}; passed through`);
        return;
      }
      if (!sidecar.wantsHook(method)) return;
      if (TOOL_HOOKS.has(method) && !sidecar.wantsTool((hookInput as { tool?: unknown } | undefined)?.tool)) return;
      let sent: unknown = output;
      if (method === "chat.messages.transform") {
        sent = projectMessages(output);
        if (!sent) return;
      }
      // Arguments that are not JSON (cycles, BigInt) fail in the encoder:
      // reason "unserialisable", nothing sent.
      const params = { input: hookInput ?? {}, output: sent };
      const r = await sidecar.request(method, params, deadline - (Date.now() - started));
      if (!r.ok) {
        log.once(`${r.reason}:${method}`, "warn", `hookwire: ${method} ${r.reason}${r.detail ? ` (${r.detail})` : ""}; passed through`);
        return;
      }
      const patch = (r.result as { patch?: unknown } | null)?.patch;
      if (patch === undefined) {
        log.once(`no-patch:${method}`, "warn", `hookwire: ${method} reply has no patch; passed through`);
        return;
      }
      const applied = applyPatchInPlace(output, patch);
      if (!applied.ok) {
        log.once(`patch:${method}`, "warn", `hookwire: ${method} patch not applied (${applied.error}); output left as it was`);
        trace?.write({ ev: "patch-failed", method, error: applied.error });
      }
    } catch (err) {
      log.once(`internal:${method}`, "error", `hookwire shim: ${method} failed internally: ${errorText(err)}; passed through`);
    }
  };

  // Events that arrive before initialize has answered (so before the wanted
  // event types are known) wait for it; OpenCode does not await the event
  // hook, so waiting blocks nothing. dispose() lets them finish first.
  const inflightEvents = new Set<Promise<void>>();

  const forwardEvent = async (event: { type: string }): Promise<void> => {
    if (!sidecar.wantsEvent(event.type)) return;
    if (!sidecar.notify("event", { input: { event } })) return;
    if (trace && event.type === "session.deleted") await inspect(sidecar, "session.deleted", { event });
  };

  const onEvent = async (hookInput: { event?: { type?: unknown } } | undefined): Promise<void> => {
    try {
      const event = hookInput?.event;
      if (!event || typeof event.type !== "string") return;
      if (sidecar.state === "ready") return await forwardEvent(event as { type: string });
      if (sidecar.state === "failed" || sidecar.state === "stopped" || inflightEvents.size >= MAX_WAITING_EVENTS) return;
      const waiting = sidecar
        .whenReady(EVENT_WAIT_MS)
        .then((ready) => (ready ? forwardEvent(event as { type: string }) : undefined))
        .catch(() => {});
      inflightEvents.add(waiting);
      await waiting;
      inflightEvents.delete(waiting);
    } catch (err) {
      log.once("internal:event", "error", `hookwire shim: event failed internally: ${errorText(err)}`);
    }
  };

  const hooks: Hooks = {
    "tool.execute.before": (i, o) => forward("tool.execute.before", i, o),
    "tool.execute.after": (i, o) => forward("tool.execute.after", i, o),
    "chat.message": (i, o) => forward("chat.message", i, o),
    "experimental.chat.system.transform": (i, o) => forward("chat.system.transform", i, o),
    "experimental.chat.messages.transform": (i, o) => forward("chat.messages.transform", i, o),
    event: (i) => onEvent(i as { event?: { type?: unknown } }),
    config: async (cfg) => {
      try {
        configSubagents = subagentsFromConfig(cfg);
      } catch {
        // only a fallback
      }
    },
    dispose: async () => {
      try {
        trace?.write({ ev: "dispose", pid: sidecar.pid, waitingEvents: inflightEvents.size });
        if (inflightEvents.size > 0) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            Promise.allSettled([...inflightEvents]),
            new Promise((r) => (timer = setTimeout(r, DISPOSE_EVENT_WAIT_MS))),
          ]);
          clearTimeout(timer);
        }
        await sidecar.dispose();
      } catch {
        // disposal is best effort
      }
      live.delete(sidecar);
    },
  };

  return { hooks, settings, sidecar, dispose: hooks.dispose! };
}
