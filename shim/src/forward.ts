// Hook forwarding: one OpenCode hook call becomes one sidecar request whose
// patch is applied to OpenCode's output in place, or nothing at all. Events
// become notifications. Nothing here throws to OpenCode or waits past its
// deadline.

import { HOOKS, type OpenCodeHook } from "./contract.gen.js";
import type { Logger } from "./log.js";
import type { Params } from "./protocol.gen.js";
import { applyPatchInPlace } from "./patch.js";
import { errorText, type Sidecar } from "./sidecar.js";
import type { Trace } from "./trace.js";
import type { TransformSync } from "./transformsync.js";

/** A hook the sidecar answers with a patch (PROTOCOL.md section 3): every hook of the contract but the event notification. */
export type HookMethod = Extract<(typeof HOOKS)[number], { kind: "request" }>["method"];

/** Sidecar method → OpenCode hook name (PROTOCOL.md section 3), from the contract. */
export const HOOK_NAMES = Object.fromEntries(HOOKS.map((h) => [h.method, h.opencodeHook])) as Readonly<
  Record<(typeof HOOKS)[number]["method"], OpenCodeHook>
>;

/** Hooks that carry the history or the system prompt: the longer deadline. */
const TRANSFORMS: ReadonlySet<string> = new Set(HOOKS.filter((h) => h.transform).map((h) => h.method));
/** Hooks called per tool call: left out for tools the sidecar does not act on (capabilities.taskTools). */
const TOOL_HOOKS: ReadonlySet<string> = new Set(HOOKS.filter((h) => h.toolCall).map((h) => h.method));

export type Deadlines = { timeoutMs: number; transformTimeoutMs: number };

export type ForwardContext = {
  sidecar: Sidecar;
  /** The bases of incremental chat.messages.transform calls. */
  transforms: TransformSync;
  deadlines: Deadlines;
  log: Logger;
  trace?: Trace;
};

/** The deadline of one hook method: transforms get the longer one. */
export function deadlineOf(method: HookMethod, d: Deadlines): number {
  return TRANSFORMS.has(method) ? d.transformTimeoutMs : d.timeoutMs;
}

/**
 * A hook's params: OpenCode's own input and output, sent as they are; the
 * sidecar checks them (a -32602 names what is wrong) and the shim does not.
 */
function hookParams<M extends HookMethod>(input: unknown, output: unknown): Params[M] {
  return { input: input ?? {}, output } as Params[M];
}

/** One hook call: forward, wait at most the deadline, patch output in place or leave it. */
export async function forwardHook(ctx: ForwardContext, method: HookMethod, hookInput: unknown, output: unknown): Promise<void> {
  const { sidecar, log, trace } = ctx;
  try {
    const deadline = deadlineOf(method, ctx.deadlines);
    const started = Date.now();
    if (!(await sidecar.whenReady(deadline))) {
      if (sidecar.state !== "failed") log.once(`not-ready:${method}`, "warn", `hookwire: sidecar not ready within ${deadline} ms for ${method}; passed through`);
      return;
    }
    if (!sidecar.wantsHook(method)) return;
    if (TOOL_HOOKS.has(method) && !sidecar.wantsTool((hookInput as { tool?: unknown } | undefined)?.tool)) return;
    // Arguments that are not JSON (cycles, BigInt) fail in the encoder:
    // reason "unserialisable", nothing sent. The history goes projected,
    // and only what changed since the sidecar's base (transformsync.ts).
    const r =
      method === "chat.messages.transform"
        ? await ctx.transforms.request(sidecar, method, hookInput, output, deadline - (Date.now() - started))
        : await sidecar.request(method, hookParams<typeof method>(hookInput, output), deadline - (Date.now() - started));
    if (!r) return;
    if (!r.ok) {
      log.once(`${r.reason}:${method}`, "warn", `hookwire: ${method} ${r.reason}${r.detail ? ` (${r.detail})` : ""}; passed through`);
      return;
    }
    const patch: unknown = r.result?.patch;
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
}

export type EventOptions = {
  /** How long an event that came before initialize may wait for it. */
  waitMs?: number;
  /** How many such events may wait at once; later ones are dropped. */
  maxWaiting?: number;
  /** Called after a session.deleted went out (the trace's inspection). */
  afterDelete?: (event: { type: string }) => Promise<void>;
};

/**
 * OpenCode's `event` hook. Events that arrive before initialize has answered
 * (so before the wanted event types are known) wait for it; OpenCode does not
 * await the event hook, so waiting blocks nothing. `drain` lets them finish
 * before the sidecar is shut down.
 */
/** How many assistant messages' last forwarded usage EventForwarder remembers, to send each usage once. */
const USAGE_MEMORY = 256;

/**
 * What goes out of a `message.updated` event (PROTOCOL.md 4.9, 4.10): an
 * assistant message's usage, cut down to the session, message id,
 * provider, model, token counts, cost, completion time and error (its
 * name and status code: its text comes with session.error) — no content,
 * no error text, no paths;
 * undefined for any other message, and for one whose tokens are still all
 * zero while it neither completed nor failed (OpenCode reports a message
 * when it starts).
 */
export function usageEvent(event: { type: string; properties?: unknown }): { type: string; properties: unknown } | undefined {
  const info = (event.properties as { info?: Record<string, unknown> } | undefined)?.info;
  if (!info || info.role !== "assistant" || typeof info.id !== "string" || typeof info.sessionID !== "string") return undefined;
  const t = info.tokens as { input?: unknown; output?: unknown; reasoning?: unknown; cache?: { read?: unknown; write?: unknown } } | undefined;
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
  const tokens = {
    input: num(t?.input),
    output: num(t?.output),
    reasoning: num(t?.reasoning),
    cache: { read: num(t?.cache?.read), write: num(t?.cache?.write) },
  };
  const completed = num((info.time as { completed?: unknown } | undefined)?.completed);
  const err = info.error as { name?: unknown; data?: { statusCode?: unknown } } | undefined;
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  const status = num(err?.data?.statusCode);
  const error = err && typeof err === "object" ? { name: str(err.name), ...(status ? { data: { statusCode: status } } : {}) } : undefined;
  if (tokens.input + tokens.output + tokens.reasoning + tokens.cache.read + tokens.cache.write === 0 && !completed && !error) return undefined;
  return {
    type: event.type,
    properties: {
      sessionID: info.sessionID,
      info: {
        id: info.id,
        sessionID: info.sessionID,
        role: "assistant",
        providerID: str(info.providerID),
        modelID: str(info.modelID),
        tokens,
        cost: num(info.cost),
        ...(completed ? { time: { completed } } : {}),
        ...(error ? { error } : {}),
      },
    },
  };
}

export class EventForwarder {
  private readonly waiting = new Set<Promise<void>>();
  /** Message id → the usage last sent for it (JSON), oldest first. */
  private readonly sentUsage = new Map<string, string>();

  constructor(
    private readonly sidecar: Sidecar,
    private readonly log: Logger,
    private readonly opts: EventOptions = {},
  ) {}

  /** Events waiting for initialize right now. */
  get waitingCount(): number {
    return this.waiting.size;
  }

  async onEvent(hookInput: { event?: { type?: unknown } } | undefined): Promise<void> {
    try {
      const event = hookInput?.event;
      if (!event || typeof event.type !== "string") return;
      const sidecar = this.sidecar;
      if (sidecar.state === "ready") return await this.forward(event as { type: string });
      if (sidecar.state === "failed" || sidecar.state === "stopped" || this.waiting.size >= (this.opts.maxWaiting ?? 1000)) return;
      const waiting = sidecar
        .whenReady(this.opts.waitMs ?? 10_000)
        .then((ready) => (ready ? this.forward(event as { type: string }) : undefined))
        .catch(() => {});
      this.waiting.add(waiting);
      await waiting;
      this.waiting.delete(waiting);
    } catch (err) {
      this.log.once("internal:event", "error", `hookwire shim: event failed internally: ${errorText(err)}`);
    }
  }

  /** Whether this usage differs from the one last sent for its message (and remembers it). */
  private firstTime(usage: { properties: unknown }): boolean {
    const info = (usage.properties as { info: { id: string; tokens: unknown; modelID: string; cost: unknown; time?: unknown; error?: unknown } }).info;
    const sig = JSON.stringify([info.tokens, info.modelID, info.cost, info.time, info.error]);
    if (this.sentUsage.get(info.id) === sig) return false;
    this.sentUsage.delete(info.id);
    this.sentUsage.set(info.id, sig);
    if (this.sentUsage.size > USAGE_MEMORY) this.sentUsage.delete(this.sentUsage.keys().next().value as string);
    return true;
  }

  /** Waits at most ms for the events still waiting for initialize. */
  async drain(ms: number): Promise<void> {
    if (this.waiting.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.waiting]), new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  private async forward(event: { type: string }): Promise<void> {
    if (!this.sidecar.wantsEvent(event.type)) return;
    if (event.type === "message.updated") {
      const usage = usageEvent(event);
      if (!usage || !this.firstTime(usage)) return;
      event = usage;
    }
    if (!this.sidecar.notify("event", { input: { event } })) return;
    if (event.type === "session.deleted") await this.opts.afterDelete?.(event);
  }
}
