// OpenCode 2's runtime fallback (PROTOCOL.md 4.8, "On OpenCode 2"): the
// session `retry` hook sent as model.failed with inPlace, the switch the
// sidecar answers made with switchModel within the hook's deadline, and a
// child's failure events sent for the model's health. Split from v2.ts,
// which registers these.

import type { V2Event, V2PluginContext, V2Retry, V2ToolAfter, V2ToolBefore } from "./v2.js";

/** What model.failed answers, as far as the bridge reads it. */
export type V2ModelFailedResult = { action?: string; fallback?: { providerID: string; modelID: string; variant?: string }; reason?: string } | null | undefined;

/** What the bridge asks of the sidecar beyond the 1.x hooks. */
export type V2Services = {
  /** The sidecar's model.failed (PROTOCOL.md 5); undefined when it cannot answer. */
  modelFailed?: (params: Record<string, unknown>) => Promise<V2ModelFailedResult>;
  /** A debug note for the shim's trace. */
  note?: (what: string, detail?: Record<string, unknown>) => void;
  /** What the user is told of a switch (the shim's log: its file, and the terminal under `opencode run`). */
  tell?: (level: "info" | "warn", message: string, detail?: Record<string, unknown>) => void;
  /** The deadline of the retry hook's work (the shim's timeoutMs): model.failed and the host calls after it. */
  timeoutMs?: number;
};

/** Without a timeoutMs the bridge's host calls are bounded by this (the shim's default). */
const DEFAULT_TIMEOUT_MS = 4000;

/**
 * Runs a host call bounded by ms: undefined when it returned in time, else
 * why not ("threw: ...", "no answer within N ms"). A call given up on is
 * left to finish by itself; what it does then is the host's.
 */
export async function within(call: () => Promise<unknown>, ms: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${Math.round(ms)} ms`), Math.max(ms, 0));
  });
  const done = Promise.resolve()
    .then(call)
    .then(
      () => undefined,
      (err: unknown) => `threw: ${err instanceof Error ? err.message : String(err)}`,
    );
  try {
    return await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The subagent calls in flight, by call id: their parent session and agent, and the child a resume names. */
export class SubagentCalls {
  private readonly calls = new Map<string, { parent: string; agent?: string; child?: string }>();

  started(d: V2ToolBefore): void {
    if (d?.tool !== "subagent" || typeof d.id !== "string") return;
    const input = d.input as { agent?: unknown; sessionID?: unknown } | null | undefined;
    this.calls.set(d.id, {
      parent: d.sessionID,
      agent: typeof input?.agent === "string" ? input.agent : undefined,
      child: typeof input?.sessionID === "string" ? input.sessionID : undefined,
    });
    // A call whose execute.after never comes is forgotten at the bound.
    if (this.calls.size > 256) this.calls.delete(this.calls.keys().next().value as string);
  }

  ended(d: V2ToolAfter): void {
    if (typeof d?.id === "string") this.calls.delete(d.id);
  }

  /** The parent of child session (agent): the call that resumes it, else the latest call in flight for its agent. */
  parentOf(child: string, agent: string | undefined): string | undefined {
    let latest: string | undefined;
    for (const c of this.calls.values()) {
      if (c.child === child) return c.parent;
      if (c.child === undefined && agent !== undefined && c.agent === agent) latest = c.parent;
    }
    return latest;
  }
}

/** A v2 model reference as model.failed's `model`. */
function failedModel(m: { id?: string; providerID?: string } | undefined): { providerID: string; modelID: string } | undefined {
  return typeof m?.providerID === "string" && typeof m.id === "string" ? { providerID: m.providerID, modelID: m.id } : undefined;
}

/** SessionError.Error as model.failed's `error`. */
function failedError(e: { type?: unknown; message?: unknown; status?: unknown } | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof e?.status === "number") out.statusCode = e.status;
  if (typeof e?.type === "string") out.name = e.type;
  if (typeof e?.message === "string") out.message = e.message;
  return out;
}

/**
 * The session `retry` hook: the failure goes to the sidecar as
 * model.failed with inPlace and the hook's attempt; on "switch" the
 * session's model is set to the fallback (switchModel) and the retry goes
 * at once. The runner reloads the session before its next attempt, so the
 * same call goes on on the fallback and the parent's subagent call
 * returns its answer. The hook's work is bounded by timeoutMs: a
 * switchModel that throws or does not return in time is given up, the
 * runner's own decision stands, and the user is told; the next attempt,
 * still on the failed model, is switched again (PROTOCOL.md 4.8 "Asked
 * again").
 */
export async function bridgeRetry(ctx: V2PluginContext, services: V2Services, calls: SubagentCalls, d: V2Retry): Promise<void> {
  if (!services.modelFailed || typeof d?.sessionID !== "string" || !d.error) return;
  const deadline = Date.now() + (services.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const params: Record<string, unknown> = { sessionID: d.sessionID, error: failedError(d.error), inPlace: true };
  const model = failedModel(d.model);
  if (model) params.model = model;
  if (typeof d.agent === "string") params.agent = d.agent;
  if (Number.isSafeInteger(d.attempt) && (d.attempt as number) > 0) params.attempt = d.attempt;
  const parent = calls.parentOf(d.sessionID, d.agent);
  if (parent) params.parentID = parent;
  const res = await services.modelFailed(params);
  const to = res?.fallback;
  const switchModel = ctx.session.switchModel;
  if (res?.action !== "switch" || !to || typeof switchModel !== "function") return;
  const from = model ? `${model.providerID}/${model.modelID}` : undefined;
  const target = `${to.providerID}/${to.modelID}`;
  const detail = { session: d.sessionID, from, to: target, attempt: d.attempt };
  const why = await within(
    () => switchModel({ sessionID: d.sessionID, model: { providerID: to.providerID, id: to.modelID, ...(to.variant ? { variant: to.variant } : {}) } }),
    deadline - Date.now(),
  );
  if (why !== undefined) {
    services.note?.("fallback-unapplied", { ...detail, why });
    services.tell?.("warn", `hookwire: the switch of ${d.sessionID} from ${from ?? "its model"} to ${target} did not apply (${why}); the next attempt asks again`, { ...detail, why });
    return;
  }
  d.decision = { retry: true, delay: 0 };
  services.note?.("fallback", detail);
  services.tell?.("info", `hookwire: ${from ?? "the model"} failed${res.reason ? ` (${res.reason})` : ""}; switching ${d.sessionID} to ${target}`, detail);
}

/**
 * A child's failed step or run (`session.step.failed`,
 * `session.execution.failed`) with a provider's error: model.failed for
 * the model's health, as 1.x's failure events are sent.
 */
export async function bridgeFailure(services: V2Services, e: V2Event): Promise<void> {
  if (!services.modelFailed || (e?.type !== "session.step.failed" && e?.type !== "session.execution.failed")) return;
  const data = (e.data ?? {}) as { sessionID?: unknown; error?: { type?: unknown; message?: unknown; status?: unknown }; model?: { id?: string; providerID?: string } };
  if (typeof data.sessionID !== "string" || !data.error || typeof data.error !== "object") return;
  const type = typeof data.error.type === "string" ? data.error.type : "";
  if (!type.startsWith("provider.")) return;
  const params: Record<string, unknown> = { sessionID: data.sessionID, error: failedError(data.error) };
  const model = failedModel(data.model);
  if (model) params.model = model;
  await services.modelFailed(params);
}
