// Runtime model fallback (PROTOCOL.md 4.8), the OpenCode side.
//
// OpenCode reports a failed model call three ways: a `session.status`
// event of type `retry` (it will try the same model again), a
// `message.updated` whose assistant message ends in an error, and
// `session.error`. Each goes to the sidecar as `model.failed`, which keeps
// the model's health and answers what to do with the session:
//   - "abort" (a subagent's session): abort the child now, so OpenCode stops
//     retrying a model that will answer 429 again; the task call then fails
//     in the parent. At the parent's next request
//     (`experimental.chat.messages.transform`, which OpenCode awaits) the
//     child, idle by then, is prompted again on the fallback model, and its
//     answer replaces the error in the task tool's own
//     `<task id=... state="completed">` form: in that request, and, through
//     the part update of OpenCode's server, in OpenCode's own history (so
//     later requests and later processes see a completed task call).
//   - "resend" (the user's own session): abort it and send its last user
//     message again on the fallback model.
// Measured on OpenCode 1.18.33: docs/OPENCODE.md.

import type { Logger } from "./log.js";
import type { ModelFailedResult } from "./protocol.gen.js";
import type { Sidecar } from "./sidecar.js";
import type { Trace } from "./trace.js";

/** What a fallback model looks like on the wire. */
export type FallbackModel = { providerID: string; modelID: string; variant?: string };

/** The parts of the OpenCode SDK client runtime fallback uses. */
export interface FallbackClient {
  session?: {
    abort?: (o: { path: { id: string } }) => Promise<{ data?: unknown; error?: unknown }>;
    prompt?: (o: {
      path: { id: string };
      body: { agent?: string; model?: { providerID: string; modelID: string }; variant?: string; parts: { type: "text"; text: string }[] };
    }) => Promise<{ data?: { info?: { error?: unknown }; parts?: { type?: string; text?: string; synthetic?: boolean }[] }; error?: unknown }>;
    promptAsync?: (o: {
      path: { id: string };
      body: { agent?: string; model?: { providerID: string; modelID: string }; variant?: string; parts: unknown[] };
    }) => Promise<{ error?: unknown }>;
    messages?: (o: { path: { id: string } }) => Promise<{ data?: { info?: { role?: string; agent?: string }; parts?: unknown[] }[] }>;
    /** The SDK's HTTP client (hey-api), for the part update route the v1 SDK has no method for. */
    _client?: {
      patch?: (o: { url: string; path: Record<string, string>; body: unknown; headers?: Record<string, string> }) => Promise<{ error?: unknown; response?: { status?: number } }>;
    };
  };
}

type Plan = { fallback: FallbackModel; from: string; reason: string };

/** Sessions whose latest model is kept. */
const MAX_TRACKED = 1000;

/** The text the child gets when it runs again on the fallback. */
export const CONTINUE_TEXT =
  "The model you were running on failed before you finished. Continue the task above and give your final answer.";

/** The task tool's own output for a completed child (OpenCode 1.18). */
export function taskOutput(sessionID: string, text: string): string {
  return `<task id="${sessionID}" state="completed">\n<task_result>\n${text}\n</task_result>\n</task>`;
}

/** The child session of an errored task part: its metadata, else the first ses_ id in the error. */
export function childOf(state: { metadata?: { sessionId?: unknown }; error?: unknown } | undefined): string | undefined {
  const id = state?.metadata?.sessionId;
  if (typeof id === "string" && id) return id;
  return typeof state?.error === "string" ? state.error.match(/\bses_[A-Za-z0-9]+/)?.[0] : undefined;
}

type ToolPart = {
  id?: string;
  messageID?: string;
  sessionID?: string;
  type?: string;
  tool?: string;
  callID?: string;
  state?: {
    status?: string;
    input?: Record<string, unknown>;
    error?: unknown;
    output?: string;
    title?: string;
    metadata?: Record<string, unknown>;
    time?: { start?: number; end?: number };
  };
};
type Message = { info?: { sessionID?: string; role?: string }; parts?: ToolPart[] };

export type FallbackOptions = {
  /** The deadline of one model.failed call. */
  timeoutMs: number;
  /** How long a child's run on the fallback may take. */
  rescueTimeoutMs: number;
  /** The task tools (lower-cased). */
  taskTools: () => string[];
  /**
   * `opencode run`: an abort ends the run, so the user's own session is not
   * resent (its next message gets the healthy model at chat.message).
   */
  oneShot?: boolean;
  /** Finishes a rescued task call as tool.execute.after would have (aliases, 4.2); output is patched in place. */
  afterTask: (input: { tool: string; sessionID: string; callID: string; args: unknown }, output: { title: string; output: string; metadata: unknown }) => Promise<void>;
};

/**
 * The user's message as a prompt's parts, whole: its text (not the
 * synthetic parts OpenCode or a plugin added), files (an image) and agent
 * mentions, as OpenCode's prompt takes them. A resend of the text alone
 * lost an image or an @agent.
 */
function resendParts(parts: unknown[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const raw of parts) {
    const p = raw as { type?: string; synthetic?: boolean; text?: string; mime?: string; url?: string; filename?: string; source?: unknown; name?: string };
    if (p.type === "text" && !p.synthetic) out.push({ type: "text", text: p.text ?? "" });
    else if (p.type === "file" && typeof p.url === "string")
      out.push({ type: "file", mime: p.mime ?? "application/octet-stream", url: p.url, ...(p.filename ? { filename: p.filename } : {}), ...(p.source ? { source: p.source } : {}) });
    else if (p.type === "agent" && typeof p.name === "string") out.push({ type: "agent", name: p.name, ...(p.source ? { source: p.source } : {}) });
  }
  return out;
}

/**
 * A task call's key: its parent session with its callID. A callID alone is
 * not unique across sessions (another parent's errored task part with the
 * same callID received a rescued child's answer).
 */
function callKey(m: Message, part: ToolPart): string {
  return `${m.info?.sessionID ?? part.sessionID ?? ""}\u0000${part.callID ?? ""}`;
}

export class RuntimeFallback {
  /** Child sessions aborted for a fallback, waiting for the parent's next request. */
  private readonly plans = new Map<string, Plan>();
  /** Task calls rescued: callKey (parent session and callID) → completed output (applied again to later copies of the history). */
  private readonly done = new Map<string, string>();
  /** Task calls whose rescue failed: callKey → the error text naming the alias to resume. */
  private readonly failed = new Map<string, string>();
  /** Sessions with a model.failed call in flight (one failure arrives as several events). */
  private readonly asking = new Set<string>();
  private readonly rescuing = new Map<string, Promise<string | undefined>>();
  /** The model of each session's latest assistant message: a retry event does not say which model failed. */
  private readonly models = new Map<string, { providerID: string; modelID: string }>();

  constructor(
    private readonly sidecar: Sidecar,
    private readonly client: FallbackClient | undefined,
    private readonly log: Logger,
    private readonly opts: FallbackOptions,
    private readonly trace?: Trace,
  ) {}

  /** OpenCode's event hook (not awaited): failures go to the sidecar. */
  async onEvent(hookInput: unknown): Promise<void> {
    try {
      const event = (hookInput as { event?: unknown } | undefined)?.event;
      this.noteModel(event);
      const failure = failureOf(event);
      if (!failure || this.asking.has(failure.sessionID)) return;
      if (!failure.model) {
        const model = this.models.get(failure.sessionID);
        if (model) failure.model = model;
      }
      if (!this.sidecar.capabilities?.methods.includes("model.failed")) return;
      this.asking.add(failure.sessionID);
      try {
        const r = await this.sidecar.request("model.failed", failure, this.opts.timeoutMs);
        if (!r.ok) return;
        await this.act(failure.sessionID, r.result);
      } finally {
        this.asking.delete(failure.sessionID);
      }
    } catch (err) {
      this.log.once("internal:fallback", "error", `hookwire shim: runtime fallback failed internally: ${String(err)}`);
    }
  }

  /** Keeps the model of each session's latest assistant message (at most MAX_TRACKED sessions). */
  private noteModel(event: unknown): void {
    const e = event as { type?: string; properties?: { info?: { role?: string; sessionID?: unknown; providerID?: unknown; modelID?: unknown; id?: unknown }; sessionID?: unknown } } | undefined;
    if (e?.type === "session.deleted") {
      const id = e.properties?.info?.id ?? e.properties?.sessionID;
      if (typeof id === "string") this.models.delete(id);
      return;
    }
    const info = e?.type === "message.updated" ? e.properties?.info : undefined;
    if (info?.role !== "assistant" || typeof info.sessionID !== "string" || typeof info.providerID !== "string" || typeof info.modelID !== "string") return;
    this.models.delete(info.sessionID);
    this.models.set(info.sessionID, { providerID: info.providerID, modelID: info.modelID });
    if (this.models.size > MAX_TRACKED) this.models.delete(this.models.keys().next().value as string);
  }

  private async act(sessionID: string, res: ModelFailedResult | null): Promise<void> {
    if (!res || !res.fallback || (res.action !== "abort" && res.action !== "resend")) return;
    const to = `${res.fallback.providerID}/${res.fallback.modelID}`;
    const from = res.model ?? "?";
    const reason = res.reason ?? res.class ?? "failed";
    this.trace?.write({ ev: "fallback", action: res.action, session: sessionID, from, to, reason });
    // OpenCode prints (opencode run) or shows the stopped attempt as the
    // task failing ("Task cancelled"), and 1.18 has no hook that keeps it
    // from doing so: the line says what that is, before it appears.
    const when =
      res.action === "resend" && this.opts.oneShot
        ? " at the next message"
        : res.action === "abort"
          ? // `opencode run` prints the stopped attempt as "Task cancelled"; the TUI shows the task done.
            `: the subagent's attempt on ${from} is stopped${this.log.toTerminal ? ' (OpenCode shows it as "Task cancelled")' : ""} and the same task runs again on ${to}`
          : "";
    this.log.notice("info", `hookwire: ${from} failed (${reason}); switching to ${to}${when}`, { session: sessionID, from, to, reason, action: res.action });
    try {
      if (res.action === "abort") {
        this.plans.set(sessionID, { fallback: res.fallback, from, reason });
        await this.client?.session?.abort?.({ path: { id: sessionID } });
        return;
      }
      if (this.opts.oneShot) return;
      await this.resend(sessionID, res.fallback);
    } catch (err) {
      // The switch is pending in the sidecar until the session is seen on
      // the fallback; the next failure on the old model asks again (4.8).
      this.log.notice("warn", `hookwire: the switch of ${sessionID} to ${to} did not apply (${String(err)}); the next failure asks again`, { session: sessionID, from, to });
    }
  }

  /** The user's own session: abort, then send its last user message again on the fallback. */
  private async resend(sessionID: string, fallback: FallbackModel): Promise<void> {
    const s = this.client?.session;
    if (!s?.abort || !s.messages || !s.promptAsync) return;
    await s.abort({ path: { id: sessionID } });
    const list = (await s.messages({ path: { id: sessionID } })).data ?? [];
    const last = [...list].reverse().find((m) => m.info?.role === "user");
    const parts = resendParts(last?.parts ?? []);
    if (!parts.some((p) => p.type === "text")) return;
    await s.promptAsync({
      path: { id: sessionID },
      body: {
        agent: last?.info?.agent,
        model: { providerID: fallback.providerID, modelID: fallback.modelID },
        ...(fallback.variant ? { variant: fallback.variant } : {}),
        parts,
      },
    });
  }

  /**
   * Before the parent's request goes out: every errored task part whose
   * child was aborted for a fallback runs that child again on it, and the
   * part becomes the completed call. Awaited by OpenCode.
   */
  async beforeTransform(output: unknown): Promise<void> {
    try {
      if (this.plans.size === 0 && this.done.size === 0 && this.failed.size === 0) return;
      const messages = (output as { messages?: Message[] } | undefined)?.messages;
      if (!Array.isArray(messages)) return;
      const tools = this.opts.taskTools();
      for (const m of messages) {
        for (const part of m.parts ?? []) {
          if (part?.type !== "tool" || part.state?.status !== "error" || !tools.includes(String(part.tool).toLowerCase())) continue;
          const callID = callKey(m, part);
          const known = this.done.get(callID);
          if (known !== undefined) {
            complete(part, known);
            continue;
          }
          const error = this.failed.get(callID);
          if (error !== undefined) {
            part.state.error = error;
            continue;
          }
          const child = childOf(part.state);
          if (!child || !this.plans.has(child)) continue;
          const text = await this.rescue(child, m, part);
          if (text !== undefined) complete(part, text);
          else if (this.failed.has(callID)) part.state.error = this.failed.get(callID);
        }
      }
    } catch (err) {
      this.log.once("internal:fallback-transform", "error", `hookwire shim: runtime fallback failed internally: ${String(err)}`);
    }
  }

  private rescue(child: string, m: Message, part: ToolPart): Promise<string | undefined> {
    let running = this.rescuing.get(child);
    if (!running) {
      running = this.runRescue(child, m, part).finally(() => this.rescuing.delete(child));
      this.rescuing.set(child, running);
    }
    return running;
  }

  private async runRescue(child: string, m: Message, part: ToolPart): Promise<string | undefined> {
    const plan = this.plans.get(child)!;
    this.plans.delete(child);
    const s = this.client?.session;
    if (!s?.prompt) return undefined;
    const started = Date.now();
    const agent = typeof part.state?.input?.subagent_type === "string" ? part.state.input.subagent_type : undefined;
    let timer: NodeJS.Timeout | undefined;
    const reply = await Promise.race([
      s.prompt({
        path: { id: child },
        body: {
          agent,
          model: { providerID: plan.fallback.providerID, modelID: plan.fallback.modelID },
          ...(plan.fallback.variant ? { variant: plan.fallback.variant } : {}),
          parts: [{ type: "text", text: CONTINUE_TEXT }],
        },
      }).catch((err: unknown) => ({ error: err, data: undefined })),
      new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), this.opts.rescueTimeoutMs))),
    ]);
    clearTimeout(timer);
    const text = (reply?.data?.parts ?? [])
      .filter((p) => p?.type === "text" && !p.synthetic && typeof p.text === "string")
      .map((p) => p.text)
      .join("\n")
      .trim();
    if (!reply || reply.error || reply.data?.info?.error || !text) {
      const to = `${plan.fallback.providerID}/${plan.fallback.modelID}`;
      this.log.notice("warn", `hookwire: the fallback run of ${child} on ${to} did not finish; the task call names the alias to resume it`, {
        child,
        error: String(reply?.error ?? (reply ? "no answer" : "timeout")),
      });
      await this.keepResumable(child, m, part, plan, to);
      this.trace?.write({ ev: "fallback-rescue", child, ok: false, ms: Date.now() - started });
      return undefined;
    }
    const after = { title: String(part.state?.input?.description ?? ""), output: taskOutput(child, text), metadata: { ...(part.state?.metadata ?? {}), sessionId: child } };
    await this.opts.afterTask(
      { tool: String(part.tool), sessionID: m.info?.sessionID ?? part.sessionID ?? "", callID: part.callID ?? "", args: part.state?.input ?? {} },
      after,
    );
    this.done.set(callKey(m, part), after.output);
    const stored = await this.store(part, {
      status: "completed",
      input: part.state?.input ?? {},
      output: after.output,
      title: after.title,
      metadata: after.metadata,
      time: { start: part.state?.time?.start ?? Date.now(), end: Date.now() },
    });
    this.trace?.write({ ev: "fallback-rescue", child, ok: true, ms: Date.now() - started, stored });
    const to = `${plan.fallback.providerID}/${plan.fallback.modelID}`;
    this.log.say(
      "info",
      `hookwire: the ${agent ?? "subagent"} task finished on ${to} after ${plan.from} failed (${plan.reason}); the "Task cancelled" before it was the stopped attempt, not the task`,
      { child, from: plan.from, to },
    );
    return after.output;
  }

  /**
   * The rescue failed: the child keeps its work, so the call is remembered
   * as tool.execute.after would have (the child gets its alias), and the
   * task part's error names the alias to resume it with (a resume runs on a
   * healthy model: chat.message, 4.7).
   */
  private async keepResumable(child: string, m: Message, part: ToolPart, plan: Plan, to: string): Promise<void> {
    const parent = m.info?.sessionID ?? part.sessionID ?? "";
    const after = { title: String(part.state?.input?.description ?? ""), output: `<task id="${child}" state="error">\n</task>`, metadata: {} };
    await this.opts.afterTask({ tool: String(part.tool), sessionID: parent, callID: part.callID ?? "", args: part.state?.input ?? {} }, after);
    const list = await this.sidecar.request("sessions.list", { sessionID: parent }, this.opts.timeoutMs);
    const entries = list.ok && Array.isArray(list.result) ? list.result : [];
    const alias = entries.find((e) => e.taskId === child)?.alias ?? child;
    const error =
      `${String(part.state?.error ?? "Task failed")}\n[hookwire runtime fallback] ${plan.from} failed (${plan.reason}) and the run on ${to} did not finish. ` +
      `The subagent's session keeps its work: resume it with task_id: "${alias}"; it will run on a model that is not cooling down.`;
    this.failed.set(callKey(m, part), error);
    await this.store(part, { status: "error", input: part.state?.input ?? {}, error, metadata: part.state?.metadata ?? {}, time: { start: part.state?.time?.start ?? Date.now(), end: Date.now() } });
  }

  /** Writes the completed call into OpenCode's history (PATCH .../part/{partID}); false when it could not. */
  private async store(part: ToolPart, state: Record<string, unknown>): Promise<boolean> {
    const patch = this.client?.session?._client?.patch;
    if (!patch || !part.sessionID || !part.messageID || !part.id) return false;
    try {
      const r = await patch({
        url: "/session/{sessionID}/message/{messageID}/part/{partID}",
        path: { sessionID: part.sessionID, messageID: part.messageID, partID: part.id },
        body: { ...part, state },
        headers: { "Content-Type": "application/json" },
      });
      return !r?.error;
    } catch {
      return false;
    }
  }
}

/** Turns the errored part into the completed call, in place (this request's copy). */
function complete(part: ToolPart, output: string): void {
  part.state = {
    status: "completed",
    input: part.state?.input ?? {},
    output,
    title: String(part.state?.input?.description ?? ""),
    metadata: part.state?.metadata ?? {},
    time: { start: part.state?.time?.start ?? Date.now(), end: Date.now() },
  };
}

type Failure = {
  sessionID: string;
  model?: { providerID: string; modelID: string };
  error: { statusCode?: number; name?: string; message?: string };
  retryAfter?: string;
  retryAt?: number;
  attempt?: number;
};

/** The failure an OpenCode event reports, if it reports one. */
export function failureOf(event: unknown): Failure | undefined {
  const e = event as { type?: string; properties?: Record<string, unknown> } | undefined;
  const p = e?.properties;
  if (!p) return undefined;
  switch (e.type) {
    case "session.status": {
      const st = p.status as { type?: string; message?: unknown; next?: unknown; attempt?: unknown } | undefined;
      if (st?.type !== "retry" || typeof p.sessionID !== "string") return undefined;
      return {
        sessionID: p.sessionID,
        error: { message: typeof st.message === "string" ? st.message : "" },
        ...(typeof st.next === "number" ? { retryAt: st.next } : {}),
        // Which retry this is: a later one still on the model a switch left is asked again (PROTOCOL.md 4.8).
        ...(Number.isSafeInteger(st.attempt) && (st.attempt as number) > 0 ? { attempt: st.attempt as number } : {}),
      };
    }
    case "message.updated": {
      const info = p.info as { role?: string; sessionID?: unknown; providerID?: unknown; modelID?: unknown; error?: unknown } | undefined;
      if (info?.role !== "assistant" || !info.error || typeof info.sessionID !== "string") return undefined;
      const f = apiError(info.error, info.sessionID);
      if (!f) return undefined;
      if (typeof info.providerID === "string" && typeof info.modelID === "string") f.model = { providerID: info.providerID, modelID: info.modelID };
      return f;
    }
    case "session.error":
      return typeof p.sessionID === "string" ? apiError(p.error, p.sessionID) : undefined;
  }
  return undefined;
}

/** OpenCode's error object ({name, data: {message, statusCode?, responseHeaders?}}) as a failure; an abort is none. */
function apiError(error: unknown, sessionID: string): Failure | undefined {
  const err = error as { name?: unknown; data?: { message?: unknown; statusCode?: unknown; responseHeaders?: Record<string, unknown> } } | undefined;
  if (!err || typeof err !== "object") return undefined;
  const name = typeof err.name === "string" ? err.name : undefined;
  if (name === "MessageAbortedError") return undefined;
  const headers = err.data?.responseHeaders ?? {};
  const retryAfter = Object.entries(headers).find(([k]) => k.toLowerCase() === "retry-after")?.[1];
  return {
    sessionID,
    error: {
      ...(name ? { name } : {}),
      ...(typeof err.data?.message === "string" ? { message: err.data.message } : {}),
      ...(typeof err.data?.statusCode === "number" ? { statusCode: err.data.statusCode } : {}),
    },
    ...(typeof retryAfter === "string" ? { retryAfter } : {}),
  };
}
