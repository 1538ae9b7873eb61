// The OpenCode side of the shim: turns each plugin hook into a JSON-RPC call
// to the sidecar and applies the reply's patch to OpenCode's output in place.
//
// OpenCode awaits every hook, has no timeout, and aborts a tool call whose
// hook throws. So every hook here is bounded by a deadline, catches
// everything, and on any failure leaves output exactly as it was.
//
// createHookwire only wires the parts together: settings (options.ts), the
// sidecar's arguments and state check (statefile.ts), initialize params and
// OpenCode's agents (agents.ts), the process (sidecar.ts), hook and event
// forwarding (forward.ts), the log and its toasts (log.ts), and the
// process-wide lifecycle (lifecycle.ts).

import { readFileSync } from "node:fs";
import type { Hooks, PluginInput } from "@opencode-ai/plugin";
import { HOOKS, type OpenCodeHook } from "./contract.gen.js";
import { EventForwarder, forwardHook, type ForwardContext, type HookMethod } from "./forward.js";
import { disposeTracked, startTracked } from "./lifecycle.js";
import { Logger, runTerminal, type TerminalWriter } from "./log.js";
import { isExecutable, resolveSettings, type ShimSettings } from "./options.js";
import { PROTOCOL_VERSION, Sidecar, type SpawnFn } from "./sidecar.js";
import { checkStateFile, sidecarArgs } from "./statefile.js";
import { InitParams, type AgentWaits, type ShimClient } from "./agents.js";
import { Trace, traceInspect } from "./trace.js";
import { Providers, type ProvidersClient } from "./providers.js";
import { platformPackage, rejectionMessage, versionMismatch } from "./binary.js";
import { TransformSync } from "./transformsync.js";
import { agentModelNames } from "./providers.js";
import { belowMinimum, clientFeatures, dropModelVariant, HostCapabilities, MIN_OPENCODE, versionBesideBinary, type HostInfo } from "./host.js";
import { RuntimeFallback, type FallbackClient } from "./fallback.js";
import { SubagentCatchUp, type CatchUpClient } from "./catchup.js";
import type { CacheSummary } from "./protocol.gen.js";

export { HOOK_NAMES, type HookMethod } from "./forward.js";
export { agentListsOf, subagentsFromConfig, type ShimClient } from "./agents.js";
export { stateFileWarning, stateFileWarnings } from "./statefile.js";

// Every OpenCode hook the contract names is one OpenCode's plugin API has
// (a compile error here names the one it lacks).
const contractHooksAreOpenCodes: [Exclude<OpenCodeHook, keyof Hooks>] extends [never] ? true : Exclude<OpenCodeHook, keyof Hooks> = true;
void contractHooksAreOpenCodes;

/** The OpenCode hooks of the contract's notifications (event): each needs its own handler below, as it gets no patch. */
type NotificationHook = Extract<(typeof HOOKS)[number], { kind: "notification" }>["opencodeHook"];

export const SHIM_VERSION = readVersion();

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    return typeof pkg.version === "string" ? pkg.version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** Test seams; OpenCode passes none. */
export type Seams = {
  /** Starts the child process instead of node's spawn (tests hand in a fake child). */
  spawn?: SpawnFn;
  /** How long to wait for OpenCode's agent list (tests shorten it). */
  agentWaits?: AgentWaits;
  /** The plugin's version instead of package.json's (tests of the version check). */
  pluginVersion?: string;
  /** The OpenCode running the plugin (server.ts passes OpenCode 2's; tests pass any); default: 1.x, its version read beside its binary. */
  host?: HostInfo;
  /** Which module OpenCode loaded: "index" (the main entry) or "server" (the ./server subpath); traced. */
  entry?: "index" | "server";
  /** Where the user-facing lines go instead of stderr under `opencode run` (tests); null: nowhere. Default: runTerminal(). */
  terminal?: TerminalWriter | null;
};

export type HookwireInstance = {
  hooks: Hooks;
  settings: ShimSettings;
  sidecar?: Sidecar;
  /** The shim's trace, when the options ask for one. */
  trace?: Trace;
  dispose(): Promise<void>;
};

/** Says once why there is no sidecar; the hooks then pass through. */
function warnNoBinary(settings: ShimSettings, log: Logger, trace?: Trace): void {
  const where =
    settings.binarySource === "option"
      ? `the plugin option "binary" (${settings.binary})`
      : settings.binarySource === "env"
        ? `HOOKWIRE_BIN (${settings.binary})`
        : settings.binarySource === "package"
          ? `the platform package ${platformPackage()} (${settings.binary})`
          : `the platform package ${platformPackage()} or "hookwire" on PATH`;
  log.alert(
    "no-binary",
    "warn",
    `hookwire: sidecar binary not found via ${where}; hooks pass through unchanged. ` +
      `Reinstall hookwire-opencode (npm installs ${platformPackage()} with it; not with --omit=optional), ` +
      `set the plugin option "binary" or HOOKWIRE_BIN, or put hookwire on PATH.`,
  );
  trace?.write({ ev: "no-binary", binary: settings.binary, source: settings.binarySource });
}

/**
 * Builds the hooks for one OpenCode instance. Exposed for tests; OpenCode
 * calls `server` in index.ts.
 */
export function createHookwire(
  input: Partial<PluginInput> | undefined,
  options?: unknown,
  env: NodeJS.ProcessEnv = process.env,
  seams: Seams = {},
): HookwireInstance {
  const client = (input?.client ?? undefined) as ShimClient | undefined;
  const terminal = seams.terminal === undefined ? runTerminal() : (seams.terminal ?? undefined);
  const log = new Logger(client, "hookwire", terminal);
  const settings = resolveSettings(options, env, input);
  const trace = settings.trace ? new Trace(settings.trace) : undefined;
  if (settings.warnings.length > 0) {
    log.alert("option-warnings", "warn", `hookwire: plugin option warnings: ${settings.warnings.join("; ")}`, { warnings: settings.warnings });
  }

  const host: HostInfo = seams.host ?? { generation: 1, version: versionBesideBinary() };
  trace?.write({ ev: "host", host, entry: seams.entry ?? "index", how: seams.host?.generation === 2 ? "setup" : "server" });
  if (belowMinimum(host.version)) {
    log.alert(
      "host-too-old",
      "error",
      `hookwire: needs OpenCode ${MIN_OPENCODE} or later (its hooks are missing before that); this is OpenCode ${host.version}, so hookwire is off. Update OpenCode.`,
      { host },
    );
    trace?.write({ ev: "host-too-old", host });
    return { hooks: {}, settings, dispose: async () => {} };
  }
  const caps = hostCapabilities(host, client, settings.config, log, trace);

  if (!settings.binary || (!seams.spawn && !isExecutable(settings.binary))) {
    warnNoBinary(settings, log, trace);
    return { hooks: {}, settings, dispose: async () => {} };
  }

  const args = sidecarArgs(settings);
  const binary = settings.binary;
  const pluginVersion = seams.pluginVersion ?? SHIM_VERSION;
  const init = new InitParams(settings.config, client, pluginVersion, log, seams.agentWaits);
  const providers = new Providers(settings.config, client as ProvidersClient | undefined, log);
  const inspect = (s: Sidecar, after: string, extra?: Record<string, unknown>) =>
    trace ? traceInspect(trace, s, after, settings.transformTimeoutMs, extra) : Promise.resolve();

  // Events reach it only once the hooks below exist, so `events` is set by then.
  const catchUp = new SubagentCatchUp(client as CatchUpClient | undefined, (e) => events.onEvent(e), log);
  const sidecar = new Sidecar({
    binary: settings.binary,
    args,
    env,
    initParams: () => init.build(),
    log,
    trace,
    stderrFile: settings.logFile,
    hungAfterMisses: settings.hungAfterMisses,
    maxInFlightBytes: settings.maxInFlightBytes,
    maxReplyBytes: settings.maxReplyBytes,
    spawn: seams.spawn,
    onNotification: (n) => {
      if (n.method === "cache.bust") toastBusts(log, n.params);
    },
    onRejected: (detail, params) =>
      void rejectionMessage(detail, binary, pluginVersion, PROTOCOL_VERSION, env).then((message) =>
        log.alert("init-rejected", "error", message, { config: params.config }),
      ),
    onReady: (s) => {
      // First, so the agents it lacks arrive before the calls that waited.
      init.onReady();
      providers.onReady();
      catchUp.reset(); // a new sidecar: the subagents it missed are caught up on again (catchup.ts)
      log.log("info", `hookwire: sidecar ready (pid ${s.pid})`, { serverInfo: s.serverInfo, capabilities: s.capabilities, args });
      const mismatch = versionMismatch(pluginVersion, s.serverInfo, binary);
      if (mismatch) log.alert("version-mismatch", "warn", mismatch, { plugin: pluginVersion, serverInfo: s.serverInfo });
      void inspect(s, "initialize");
      void checkStateFile(s, args, log, settings.transformTimeoutMs);
    },
  });
  const ctx: ForwardContext = { sidecar, transforms: new TransformSync(), deadlines: settings, log, trace };
  const events = new EventForwarder(sidecar, log, {
    afterDelete: trace ? (event) => inspect(sidecar, "session.deleted", { event }) : undefined,
  });
  const fallback = new RuntimeFallback(
    sidecar,
    client as FallbackClient | undefined,
    log,
    {
      timeoutMs: settings.timeoutMs,
      rescueTimeoutMs: settings.fallbackTimeoutMs,
      oneShot: process.argv[2] === "run",
      taskTools: () => sidecar.capabilities?.taskTools ?? ["task"],
      afterTask: (i, o) => forwardHook(ctx, "tool.execute.after", i, o),
    },
    trace,
  );
  init.start(sidecar);
  providers.start(sidecar);
  startTracked(sidecar);

  // Every hook of the contract (contract.gen.ts) forwards its call to the
  // sidecar method of the same row; these do more around it (and every
  // notification hook must be here: its type says so).
  const own: Partial<Hooks> & Pick<Required<Hooks>, NotificationHook> = {
    // An agent with an agentModels entry waits for the provider list, within
    // three quarters of the hook's deadline; the call gets the rest (providers.ts).
    "chat.message": async (i, o) => {
      caps.learnVariant(o);
      const waited = await providers.beforeChatMessage(i, o, Math.floor((settings.timeoutMs * 3) / 4));
      await forwardHook(waited ? { ...ctx, deadlines: { ...ctx.deadlines, timeoutMs: settings.timeoutMs - waited } } : ctx, "chat.message", i, o);
      afterChatMessage(caps, o);
    },
    // A failed task call's child runs again on its fallback before the
    // parent's next request (fallback.ts); no deadline: it is a model run.
    "experimental.chat.messages.transform": async (i, o) => {
      await fallback.beforeTransform(o);
      return forwardHook(ctx, "chat.messages.transform", i, o);
    },
    event: (i) => (
      providers.onEvent(i),
      forgetDeleted(ctx.transforms, i),
      void fallback.onEvent(i),
      catchUp.onEvent(i),
      events.onEvent(i as { event?: { type?: unknown } })
    ),
  };
  const hooks: Hooks = {
    config: async (cfg) => (init.onConfig(cfg), providers.onConfig(cfg)),
    dispose: () => (init.stop(), providers.stop(), disposeTracked(sidecar, events, trace)),
  };
  for (const h of HOOKS) {
    (hooks as Record<OpenCodeHook, unknown>)[h.opencodeHook] =
      own[h.opencodeHook] ?? ((i: unknown, o: unknown) => forwardHook(ctx, h.method as HookMethod, i, o));
  }

  return { hooks, settings, sidecar, trace, dispose: hooks.dispose! };
}

/**
 * What this host lacks among what the configuration uses, named once
 * (host.ts). Toasts are always used; the provider list and model variants
 * only when config.agentModels lists an agent (on OpenCode 2 the provider
 * list comes from ctx.model, server.ts).
 */
function hostCapabilities(host: HostInfo, client: unknown, config: Record<string, unknown>, log: Logger, trace?: Trace): HostCapabilities {
  const caps = new HostCapabilities(host, (message, off) => {
    log.alert(`host-features:${off.join(",")}`, "warn", message, { host, off });
    trace?.write({ ev: "host-features", host, off });
  });
  const models = agentModelNames(config).size > 0;
  const seen = clientFeatures(client);
  caps.set("toasts", host.generation !== 2 && seen.toasts === true);
  if (models) caps.set("providers", seen.providers === true);
  if (!models) caps.ignore("variant");
  caps.announce();
  return caps;
}

/** chat.message on a host that keeps the variant off the model: the sidecar's variant comes off again (host.ts). */
function afterChatMessage(caps: HostCapabilities, output: unknown): void {
  if (caps.has("variant") !== false) return;
  dropModelVariant(output);
  caps.announce();
}

/**
 * The sidecar found a session's prompt cache missed again (cache.bust,
 * PROTOCOL.md 4.9: it alone counts busts, and sends the session's
 * status.cache.perSession entry): shows it as a toast, once per session.
 */
export function toastBusts(log: Logger, s: CacheSummary): void {
  if (typeof s?.session !== "string" || typeof s.lastBust?.detail !== "string") return;
  log.alert(
    `cache-busts:${s.session}`,
    "warn",
    `hookwire: prompt cache missed ${s.bustsInARow} times in a row in session ${s.session}: ${s.lastBust.detail}`,
    { session: s.session, cause: s.lastBust.cause, tokensLost: s.lastBust.tokensLost },
  );
}

/** A deleted session's transform base is dropped at once, not left to the LRU bound. */
export function forgetDeleted(transforms: TransformSync, hookInput: unknown): void {
  const event = (hookInput as { event?: { type?: unknown; properties?: { sessionID?: unknown; info?: { id?: unknown } } } } | undefined)?.event;
  if (event?.type !== "session.deleted") return;
  const id = event.properties?.info?.id ?? event.properties?.sessionID;
  if (typeof id === "string") transforms.forgetSession(id);
}
