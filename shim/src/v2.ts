// OpenCode 2's plugin API, bridged to the same hooks OpenCode 1.x calls
// (docs/OPENCODE.md, "OpenCode 2"). OpenCode 2 loads a default export
// `{id, setup}`; `setup(ctx)` registers callbacks on the context instead of
// returning hooks, and each callback gets one mutable draft that the host
// reads after it returns (like 1.x's `output`). Built to the released
// 2.0.x API as read in the OpenCode repository (docs/OPENCODE.md, "OpenCode
// 2.0.x"); not yet run against a real OpenCode 2.
//
//   v2                                   1.x hook (what the sidecar gets)
//   session.hook("context", draft)       experimental.chat.system.transform
//                                        + experimental.chat.messages.transform
//   tool.hook("execute.before", draft)   tool.execute.before
//   tool.hook("execute.after", draft)    tool.execute.after (a failed call
//                                        too, with input.status "error")
//   event.subscribe()                    event (session.deleted and the rest;
//                                        session.step.ended/failed as
//                                        message.updated, session.execution.*
//                                        and session.retry.scheduled as
//                                        session.status/idle/error: toV1Event)
//   (nothing)                            chat.message: v2 has no hook that
//                                        may change the model of a request
//                                        (the drafts' `model` is read-only);
//                                        the sidecar chooses a child's model
//                                        in tool.execute.before instead, as
//                                        the subagent call's `model` input
//                                        (PROTOCOL.md 4.7).
//   session.hook("retry", draft)         model.failed with inPlace; on "switch"
//                                        ctx.session.switchModel and an
//                                        immediate retry (the same-call rescue)
//   session.step.failed / .execution.failed  model.failed (health)
//   cleanup returned by setup            dispose
//
// The message history differs in kind: 1.x hands plugins its stored
// messages (`{info, parts}`), v2 the LLM request (`{role, content}`, tool
// results in their own `tool` messages). The bridge shows the sidecar the
// 1.x shape it knows (one message per user/assistant message, a tool call
// and its result as one `tool` part) and writes back what the sidecar
// changes that has a place in v2's shape: text parts (changed, added,
// removed) and a tool result's output or error text.

import type { Hooks } from "@opencode-ai/plugin";
import { HOOKS, type HookMethod } from "./contract.gen.js";

/**
 * The 1.x hook a contract hook method is, from the contract (HOOKS): the
 * bridge names contract methods, never 1.x hook names of its own.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type V1Hook = (input: any, output: any) => Promise<unknown>;
function v1(hooks: Hooks, method: HookMethod): V1Hook | undefined {
  const row = HOOKS.find((h) => h.method === method);
  return row ? ((hooks as Record<string, unknown>)[row.opencodeHook] as V1Hook | undefined) : undefined;
}

/**
 * The OpenCode 2 hooks this bridge drives (setupV2). Every contract hook
 * whose row names an OpenCode 2 hook (HOOKS[].opencode2) must be one of
 * these (a test holds it so), and a contract hook with none says why in
 * contract.json.
 */
export const BRIDGED_V2_HOOKS = ["session.context", "tool.execute.before", "tool.execute.after", "event.subscribe"] as const;

/** The draft of v2's session `context` hook (SessionContext), as far as the bridge reads it. */
export type V2SystemPart = { type: "text"; text: string; [k: string]: unknown };
export type V2ContentPart = { type: string; [k: string]: unknown };
export type V2Message = { id?: string; role: string; content: V2ContentPart[]; [k: string]: unknown };
export type V2Context = {
  readonly sessionID: string;
  readonly agent?: string;
  /** Why the request is made (SessionRequestKind): "primary" is the agent loop; title, compaction and generate requests are auxiliary. */
  readonly kind?: string;
  readonly model?: { id?: string; providerID?: string; variant?: string };
  system: V2SystemPart[];
  messages: V2Message[];
  [k: string]: unknown;
};
export type V2ToolBefore = { tool: string; readonly sessionID: string; readonly agent?: string; readonly messageID?: string; readonly id: string; input: unknown };
export type V2ToolAfter = {
  readonly tool: string;
  readonly sessionID: string;
  readonly agent?: string;
  readonly messageID?: string;
  readonly id: string;
  readonly input: unknown;
  readonly status: "completed" | "error";
  result?: { output?: unknown; content?: string | Array<{ type: string; text?: string }>; metadata?: Record<string, unknown> };
  /** A failed call's Tool.Error (a tagged error: `_tag` "Tool.Error", `message`), mutable. */
  error?: { message?: unknown; [k: string]: unknown };
};
/** The draft of v2's session `retry` hook (SessionRetry, packages/plugin/src/promise/session.ts @ 03545fd3): awaited by the runner before each retry; `decision` mutable. */
export type V2Retry = {
  readonly sessionID: string;
  readonly agent?: string;
  readonly model?: { id?: string; providerID?: string; variant?: string };
  /** SessionError.Error (packages/schema/src/session-error.ts @ 117c0bf0): {type, message, status?}; a 429 is type "provider.rate-limit", status 429. */
  readonly error?: { type?: string; message?: string; status?: number };
  readonly attempt?: number;
  decision: { retry: false } | { retry: true; delay: number };
};
export type V2Event = { id?: string; type: string; created?: number; data?: Record<string, unknown>; durable?: { aggregateID?: string }; [k: string]: unknown };

type Registration = { dispose: () => Promise<void> };
type HookFn<E> = (name: string, callback: (draft: E) => Promise<void> | void) => Promise<Registration>;

/** The parts of v2's plugin Context the bridge uses. */
export type V2PluginContext = {
  readonly app?: { name?: string; version?: string };
  /** The project this plugin instance serves (the background service serves several). */
  readonly location?: { directory?: string; workspaceID?: string };
  readonly options?: Record<string, unknown>;
  /** switchModel({sessionID, model: {providerID, id, variant?}}) sets a session's model (the client's POST /api/session/{id}/model). */
  readonly session: { hook: HookFn<any>; switchModel?: (input: { sessionID: string; model: { providerID: string; id: string; variant?: string } }) => Promise<unknown> };
  readonly tool: { hook: HookFn<any> };
  readonly event: { subscribe: () => AsyncIterable<V2Event> };
  readonly agent?: { list?: (input?: unknown) => Promise<unknown> };
  /** The model catalogue (adapter.ts: model.list, model.default), for providers.update. */
  readonly model?: { list?: (input?: unknown) => Promise<unknown>; default?: (input?: unknown) => Promise<unknown> };
};

// --- system ----------------------------------------------------------------------

/** system.transform over v2's system parts: the strings in, changed parts written back. */
export async function bridgeSystem(hooks: Hooks, draft: V2Context): Promise<void> {
  const hook = v1(hooks, "chat.system.transform");
  if (!hook) return;
  const before = draft.system.map((p) => (typeof p?.text === "string" ? p.text : ""));
  const output = { system: [...before] };
  const model = { providerID: draft.model?.providerID, modelID: draft.model?.id, id: draft.model?.id };
  await hook({ sessionID: draft.sessionID, model } as never, output);
  if (!Array.isArray(output.system) || sameStrings(before, output.system)) return;
  const next: V2SystemPart[] = output.system.map((text, i) =>
    i < draft.system.length && draft.system[i]?.text === text ? draft.system[i] : { type: "text", text: String(text) },
  );
  draft.system.splice(0, draft.system.length, ...next);
}

function sameStrings(a: string[], b: unknown[]): boolean {
  return a.length === b.length && a.every((s, i) => s === b[i]);
}

// --- messages -----------------------------------------------------------------------

/** A 1.x-shaped message and where each of its parts came from in v2's request. */
type Mapped = {
  messages: Array<{ info: Record<string, unknown>; parts: Array<Record<string, unknown>> }>;
  /** Per 1.x message: its v2 message index. */
  origin: number[];
  /** Per 1.x tool part (by part id): the v2 tool-result part, when there was one. */
  results: Map<string, V2ContentPart>;
};

function resultText(result: unknown): { text: string; error: boolean } {
  const r = result as { type?: unknown; value?: unknown } | undefined;
  const value = r?.value;
  const text =
    typeof value === "string"
      ? value
      : Array.isArray(value)
        ? value.map((c) => (typeof (c as { text?: unknown })?.text === "string" ? (c as { text: string }).text : "")).join("")
        : value === undefined
          ? ""
          : JSON.stringify(value);
  return { text, error: r?.type === "error" };
}

/** v2's request messages as 1.x's `{info, parts}` (see the top of this file). */
export function toV1Messages(draft: V2Context): Mapped {
  const mapped: Mapped = { messages: [], origin: [], results: new Map() };
  const toolParts = new Map<string, Record<string, unknown>>();
  draft.messages.forEach((m, mi) => {
    if (m.role === "tool") {
      for (const c of m.content ?? []) {
        if (c.type !== "tool-result") continue;
        const part = toolParts.get(String(c.id));
        if (!part) continue;
        const { text, error } = resultText(c.result);
        part.state = error
          ? { status: "error", input: (part.state as { input?: unknown }).input, error: text }
          : { status: "completed", input: (part.state as { input?: unknown }).input, output: text };
        mapped.results.set(String(part.id), c);
      }
      return;
    }
    if (m.role !== "user" && m.role !== "assistant") return;
    const id = typeof m.id === "string" && m.id ? m.id : `v2msg_${mi}`;
    const parts: Array<Record<string, unknown>> = [];
    (m.content ?? []).forEach((c, pi) => {
      const partID = `${id}_p${pi}`;
      if (c.type === "text") parts.push({ id: partID, messageID: id, sessionID: draft.sessionID, type: "text", text: c.text });
      else if (c.type === "tool-call") {
        const part = {
          id: partID,
          messageID: id,
          sessionID: draft.sessionID,
          type: "tool",
          tool: c.name,
          callID: c.id,
          state: { status: "pending", input: c.input },
        };
        toolParts.set(String(c.id), part);
        parts.push(part);
      }
    });
    mapped.messages.push({ info: { id, sessionID: draft.sessionID, role: m.role, agent: draft.agent }, parts });
    mapped.origin.push(mi);
  });
  return mapped;
}

/** Writes the sidecar's changes to the 1.x-shaped copy back into v2's messages. */
export function fromV1Messages(draft: V2Context, mapped: Mapped, after: Mapped["messages"]): void {
  after.forEach((msg, i) => {
    const mi = mapped.origin[i];
    if (mi === undefined || msg === undefined) return;
    const target = draft.messages[mi];
    // Text parts: the sidecar's list, in order; the others stay where they were.
    const texts = (msg.parts ?? []).filter((p) => p?.type === "text").map((p) => String(p.text ?? ""));
    const oldTexts = target.content.filter((c) => c.type === "text");
    if (!sameStrings(oldTexts.map((c) => String(c.text ?? "")), texts)) {
      const rest = target.content.filter((c) => c.type !== "text");
      const kept = texts.map((text, k) => (oldTexts[k]?.text === text ? oldTexts[k] : { type: "text", text }));
      // Text first where the message began with text (a user message), after the rest otherwise.
      target.content = target.content[0]?.type === "text" || rest.length === 0 ? [...kept, ...rest] : [...rest, ...kept];
    }
    for (const p of msg.parts ?? []) {
      if (p?.type !== "tool") continue;
      const result = mapped.results.get(String(p.id));
      const state = p.state as { status?: unknown; output?: unknown; error?: unknown } | undefined;
      if (!result || !state) continue;
      const now = state.status === "error" ? state.error : state.output;
      if (typeof now !== "string") continue;
      const was = resultText(result.result);
      if (was.text !== now) result.result = { type: was.error ? "error" : "text", value: now };
    }
  });
}

/** messages.transform over v2's request messages. */
export async function bridgeMessages(hooks: Hooks, draft: V2Context): Promise<void> {
  const hook = v1(hooks, "chat.messages.transform");
  if (!hook || !Array.isArray(draft.messages)) return;
  const mapped = toV1Messages(draft);
  const output = { messages: structuredClone(mapped.messages) };
  await hook({} as never, output as never);
  fromV1Messages(draft, mapped, output.messages);
}

// --- tools ----------------------------------------------------------------------------

export async function bridgeToolBefore(hooks: Hooks, draft: V2ToolBefore): Promise<void> {
  const hook = v1(hooks, "tool.execute.before");
  if (!hook) return;
  const output = { args: draft.input };
  await hook({ tool: draft.tool, sessionID: draft.sessionID, callID: draft.id }, output);
  if (output.args !== draft.input) draft.input = output.args;
}

function contentText(content: string | Array<{ type: string; text?: string }> | undefined): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((c) => (c?.type === "text" && typeof c.text === "string" ? c.text : "")).join("");
  return "";
}

/**
 * tool.execute.after. A completed call as 1.x calls it. A failed call
 * (status "error"; 1.x never calls the hook for one) goes to the sidecar
 * as a failure: its error's message as the output and `status: "error"`
 * in the input, never as completed; a changed text becomes the error's
 * message, the error staying the same Tool.Error.
 */
export async function bridgeToolAfter(hooks: Hooks, draft: V2ToolAfter): Promise<void> {
  const hook = v1(hooks, "tool.execute.after");
  if (!hook) return;
  if (draft.status === "error") {
    const before = errorMessage(draft.error);
    if (before === undefined) return;
    const output = { title: "", output: before, metadata: {} };
    await hook({ tool: draft.tool, sessionID: draft.sessionID, callID: draft.id, args: draft.input, status: "error" } as never, output);
    if (typeof output.output === "string" && output.output !== before) setErrorMessage(draft, output.output);
    return;
  }
  if (draft.status !== "completed" || !draft.result) return;
  const before = contentText(draft.result.content);
  const output = { title: "", output: before, metadata: draft.result.metadata ?? {} };
  await hook({ tool: draft.tool, sessionID: draft.sessionID, callID: draft.id, args: draft.input }, output);
  if (typeof output.output === "string" && output.output !== before) {
    const content = draft.result.content;
    draft.result = {
      ...draft.result,
      // Other content (files) stays; the text is the sidecar's.
      content: Array.isArray(content) && content.some((c) => c?.type !== "text")
        ? [...content.filter((c) => c?.type !== "text"), { type: "text", text: output.output }]
        : output.output,
    };
  }
}

function errorMessage(error: unknown): string | undefined {
  const m = (error as { message?: unknown } | null | undefined)?.message;
  return typeof m === "string" ? m : undefined;
}

/** The error's message replaced in place; a frozen error is replaced by a copy of the same class and fields. */
function setErrorMessage(draft: V2ToolAfter, message: string): void {
  const error = draft.error as Record<string, unknown>;
  try {
    error.message = message;
    if (error.message === message) return;
  } catch {
    // frozen: copied below
  }
  const copy = Object.create(Object.getPrototypeOf(error) as object) as Record<string, unknown>;
  for (const k of Object.getOwnPropertyNames(error)) copy[k] = error[k];
  Object.defineProperty(copy, "message", { value: message, enumerable: false, writable: true, configurable: true });
  draft.error = copy;
}

// --- events -----------------------------------------------------------------------------

/** How many steps' and sessions' models StepModels remembers (the oldest go first). */
const STEP_MODELS = 256;

/**
 * The model each step runs on, from `session.step.started` (or the
 * session's `session.model.selected`), for the figures of its
 * `session.step.ended`, which names no model.
 */
export class StepModels {
  private readonly byKey = new Map<string, { providerID: string; modelID: string }>();

  remember(key: string, model: unknown): void {
    const m = model as { id?: unknown; providerID?: unknown } | undefined;
    if (typeof m?.id !== "string" || typeof m.providerID !== "string") return;
    this.byKey.delete(key);
    this.byKey.set(key, { providerID: m.providerID, modelID: m.id });
    if (this.byKey.size > STEP_MODELS) this.byKey.delete(this.byKey.keys().next().value as string);
  }

  of(step: unknown, session: string): { providerID: string; modelID: string } | undefined {
    return (typeof step === "string" ? this.byKey.get("step:" + step) : undefined) ?? this.byKey.get("session:" + session);
  }
}

/** A v2 SessionError.Error `{type, message, status?}` as 1.x's error `{name, data: {message, statusCode?}}`. */
function v1Error(error: unknown): { name: string; data: { message: string; statusCode?: number } } {
  const e = (error && typeof error === "object" ? error : {}) as { type?: unknown; message?: unknown; status?: unknown };
  const data: { message: string; statusCode?: number } = { message: typeof e.message === "string" ? e.message : "" };
  if (typeof e.status === "number") data.statusCode = e.status;
  return { name: typeof e.type === "string" ? e.type : "", data };
}

/**
 * A v2 event (`{id, type, data}`) as 1.x's event hook input (`{event: {id,
 * type, properties}}`), the shapes the sidecar reads (PROTOCOL.md 4.9,
 * 4.10), as OpenCode 2 defines them (packages/schema/src/session-event.ts
 * @ 03130971; SessionError.Error in session-error.ts; TokenUsage.Info in
 * token-usage.ts):
 * - `session.created` `{sessionID, parentID?, title?}` (not in
 *   session-event.ts; its data as a 2.0.20 host sends it, recorded by a
 *   third-party v2 TUI plugin's test: `{sessionID, parentID, projectID,
 *   location, slug, version}`): 1.x's, its session as `info` with the
 *   event's time as `time.created`; where a host sends none, the sidecar
 *   records a child from its subagent call (PROTOCOL.md 4.10);
 * - `session.execution.started`: `session.status` busy;
 *   `.succeeded`: `session.idle`; `.failed {error}`: `session.error`;
 *   `.interrupted {reason}`: `session.error` MessageAbortedError (an
 *   interrupt, as 1.x reports one);
 * - `session.retry.scheduled {attempt, at, error}`: `session.status` retry
 *   `{attempt, message, next}`;
 * - `session.step.started {assistantMessageID, model}` and
 *   `session.model.selected {model}`: remembered in models, for
 * - `session.step.ended {assistantMessageID, cost, tokens}` and
 *   `session.step.failed {assistantMessageID, error, cost?, tokens?}`:
 *   `message.updated` of an assistant message, with its step's model, its
 *   end as `time.completed` and a failure's error.
 */
export function toV1Event(e: V2Event, models?: StepModels): { event: { id?: string; type: string; properties: Record<string, unknown> } } {
  const data = e.data && typeof e.data === "object" ? e.data : {};
  const sessionID = typeof data.sessionID === "string" ? data.sessionID : e.durable?.aggregateID;
  const at = typeof e.created === "number" ? e.created : Date.now();
  const as = (type: string, properties: Record<string, unknown>) => ({ event: { id: e.id, type, properties: { sessionID, ...properties } } });
  if (typeof sessionID === "string") {
    switch (e.type) {
      case "session.step.started":
        models?.remember("step:" + String(data.assistantMessageID), data.model);
        break;
      case "session.model.selected":
        models?.remember("session:" + sessionID, data.model);
        break;
      case "session.step.ended":
      case "session.step.failed": {
        const model = models?.of(data.assistantMessageID, sessionID);
        const info: Record<string, unknown> = { id: data.assistantMessageID, sessionID, role: "assistant", tokens: data.tokens };
        if (model) Object.assign(info, model);
        if (typeof data.cost === "number") info.cost = data.cost;
        if (e.type === "session.step.ended") info.time = { completed: at };
        else info.error = v1Error(data.error);
        return { event: { id: e.id, type: "message.updated", properties: { info } } };
      }
      case "session.execution.started":
        return as("session.status", { status: { type: "busy" } });
      case "session.execution.succeeded":
        return as("session.idle", {});
      case "session.execution.failed":
        return as("session.error", { error: v1Error(data.error) });
      case "session.execution.interrupted":
        return as("session.error", { error: { name: "MessageAbortedError", data: { message: `interrupted (${String(data.reason ?? "user")})` } } });
      case "session.retry.scheduled":
        return as("session.status", {
          status: { type: "retry", attempt: data.attempt, message: v1Error(data.error).data.message, next: data.at },
        });
      case "session.created":
        return as("session.created", {
          info: { id: sessionID, parentID: data.parentID, title: data.title, time: { created: at } },
        });
    }
  }
  const properties: Record<string, unknown> = { ...data };
  if (typeof sessionID === "string") {
    properties.sessionID = sessionID;
    // 1.x's session events carry the session as `info`; the sidecar reads info.id.
    if (e.type.startsWith("session.") && !properties.info) properties.info = { id: sessionID };
  }
  return { event: { id: e.id, type: e.type, properties } };
}

/**
 * A background subagent's completion notice (a `session.synthetic` event
 * in the parent, `metadata {source: "subagent", childID, agent, state}`,
 * its text `<subagent sessionID=... state=...>`; packages/core/src/session/subagent-completion.ts)
 * as the tool calls 1.x would have made to resume and finish that child:
 * the entry the notice names goes from running to completed (or error).
 */
export async function bridgeCompletion(hooks: Hooks, e: V2Event): Promise<void> {
  if (e?.type !== "session.synthetic") return;
  const data = (e.data ?? {}) as { sessionID?: unknown; text?: unknown; description?: unknown; metadata?: Record<string, unknown> };
  const m = data.metadata;
  if (m?.source !== "subagent" || typeof m.childID !== "string" || typeof data.sessionID !== "string" || typeof data.text !== "string") return;
  const before = v1(hooks, "tool.execute.before");
  const after = v1(hooks, "tool.execute.after");
  if (!before || !after) return;
  const callID = `hookwire_notice_${e.id ?? m.childID}`;
  // `model: ""`: no call runs, so the sidecar chooses no model for it (a call naming its model keeps it).
  const args = { agent: m.agent, description: typeof data.description === "string" ? data.description : "", prompt: "", sessionID: m.childID, model: "" };
  await before({ tool: "subagent", sessionID: data.sessionID, callID }, { args });
  const input: Record<string, unknown> = { tool: "subagent", sessionID: data.sessionID, callID, args };
  if (m.state !== "completed") input.status = "error";
  await after(input as never, { title: "", output: data.text, metadata: {} });
}

// --- providers ------------------------------------------------------------------------------

/** A v2 API answer's list (an array, or under data/items). */
function listOf(res: unknown): unknown[] {
  const r = res as { data?: unknown; items?: unknown } | null | undefined;
  return Array.isArray(res) ? res : Array.isArray(r?.data) ? r.data : Array.isArray(r?.items) ? r.items : [];
}

/**
 * OpenCode 2's models (`ctx.model.list()`: Model.Info {id, providerID,
 * variants, enabled}; `ctx.model.default()`: Model.Ref {id, providerID})
 * as 1.x's `config.providers()` answer, for providers.update: each
 * provider with its enabled models, and the default model.
 */
export function providersOfV2(models: unknown, def: unknown): { providers: Array<{ id: string; models: Record<string, unknown> }>; defaultModel?: string } {
  const byProvider = new Map<string, Record<string, unknown>>();
  for (const m of listOf(models) as Array<Record<string, unknown> | null>) {
    if (typeof m?.providerID !== "string" || typeof m.id !== "string" || m.enabled === false) continue;
    const entry = byProvider.get(m.providerID) ?? {};
    entry[m.id] = {};
    byProvider.set(m.providerID, entry);
  }
  const out: { providers: Array<{ id: string; models: Record<string, unknown> }>; defaultModel?: string } = {
    providers: [...byProvider].map(([id, models]) => ({ id, models })),
  };
  const d = ((def as { data?: unknown } | null | undefined)?.data ?? def) as { providerID?: unknown; id?: unknown } | null | undefined;
  if (typeof d?.providerID === "string" && typeof d.id === "string") out.defaultModel = `${d.providerID}/${d.id}`;
  return out;
}

// --- runtime fallback -------------------------------------------------------------------

/** What model.failed answers, as far as the bridge reads it. */
export type V2ModelFailedResult = { action?: string; fallback?: { providerID: string; modelID: string; variant?: string } } | null | undefined;

/** What the bridge asks of the sidecar beyond the 1.x hooks. */
export type V2Services = {
  /** The sidecar's model.failed (PROTOCOL.md 5); undefined when it cannot answer. */
  modelFailed?: (params: Record<string, unknown>) => Promise<V2ModelFailedResult>;
  /** A debug note for the shim's trace. */
  note?: (what: string, detail?: Record<string, unknown>) => void;
};

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
 * model.failed with inPlace; on "switch" the session's model is set to the
 * fallback (switchModel) and the retry goes at once. The runner reloads
 * the session before its next attempt, so the same call goes on on the
 * fallback and the parent's subagent call returns its answer.
 */
export async function bridgeRetry(ctx: V2PluginContext, services: V2Services, calls: SubagentCalls, d: V2Retry): Promise<void> {
  if (!services.modelFailed || typeof d?.sessionID !== "string" || !d.error) return;
  const params: Record<string, unknown> = { sessionID: d.sessionID, error: failedError(d.error), inPlace: true };
  const model = failedModel(d.model);
  if (model) params.model = model;
  if (typeof d.agent === "string") params.agent = d.agent;
  const parent = calls.parentOf(d.sessionID, d.agent);
  if (parent) params.parentID = parent;
  const res = await services.modelFailed(params);
  const to = res?.fallback;
  if (res?.action !== "switch" || !to || typeof ctx.session.switchModel !== "function") return;
  await ctx.session.switchModel({ sessionID: d.sessionID, model: { providerID: to.providerID, id: to.modelID, ...(to.variant ? { variant: to.variant } : {}) } });
  d.decision = { retry: true, delay: 0 };
  services.note?.("fallback", { session: d.sessionID, from: model ? `${model.providerID}/${model.modelID}` : undefined, to: `${to.providerID}/${to.modelID}`, attempt: d.attempt });
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

// --- setup ---------------------------------------------------------------------------------

/**
 * Registers the bridged hooks on a v2 context. Returns v2's cleanup, which
 * stops the event loop and disposes the 1.x hooks (the sidecar).
 */
export async function setupV2(ctx: V2PluginContext, hooks: Hooks, services: V2Services = {}): Promise<() => Promise<void>> {
  const registrations: Registration[] = [];
  const calls = new SubagentCalls();
  const guard =
    <E>(fn: (hooks: Hooks, draft: E) => Promise<void>) =>
    async (draft: E) => {
      try {
        await fn(hooks, draft);
      } catch {
        // Fail open, as every 1.x hook does: a throw would abort the request.
      }
    };
  const disposeAll = async () => {
    for (const r of registrations.splice(0)) {
      try {
        await r?.dispose?.();
      } catch {
        // a registration that will not go is the host's to drop
      }
    }
  };
  let stopped = false;
  let events: AsyncIterator<V2Event>;
  try {
    // Messages first: the user messages tell the sidecar the session's agent
    // (v2 has no chat.message), which decides whether the system block applies.
    registrations.push(
      await ctx.session.hook(
      "context",
      guard<V2Context>(async (h, d) => {
        // The agent loop's requests only: a title, compaction or generate request is not the session's turn.
        if (d.kind !== undefined && d.kind !== "primary") return;
        await bridgeMessages(h, d);
        await bridgeSystem(h, d);
      }),
    ),
    );
    registrations.push(
      await ctx.tool.hook(
        "execute.before",
        guard<V2ToolBefore>(async (h, d) => {
          await bridgeToolBefore(h, d);
          calls.started(d);
        }),
      ),
    );
    registrations.push(
      await ctx.tool.hook(
        "execute.after",
        guard<V2ToolAfter>(async (h, d) => {
          calls.ended(d);
          await bridgeToolAfter(h, d);
        }),
      ),
    );
    if (services.modelFailed) {
      // The same-call rescue (PROTOCOL.md 4.8, "On OpenCode 2"). A host
      // that has no retry hook refuses its registration: the rest works
      // without it.
      try {
        registrations.push(await ctx.session.hook("retry", guard<V2Retry>((_h, d) => bridgeRetry(ctx, services, calls, d))));
      } catch {
        services.note?.("retry-hook-refused");
      }
    }
    events = ctx.event.subscribe()[Symbol.asyncIterator]();
    if (typeof events?.next !== "function") throw new TypeError("the event stream is not an async iterator");
  } catch (err) {
    // What was registered goes again; the caller stops the sidecar.
    await disposeAll();
    throw err;
  }

  const models = new StepModels();
  const loop = (async () => {
    try {
      for (;;) {
        const next = await events.next();
        if (next.done || stopped) break;
        try {
          // Not awaited, as 1.x does not await the event hook.
          void v1(hooks, "event")?.(toV1Event(next.value, models), undefined)?.catch?.(() => {});
          void bridgeCompletion(hooks, next.value).catch(() => {});
          void bridgeFailure(services, next.value).catch(() => {});
        } catch {
          // an event that cannot be read is dropped
        }
      }
    } catch {
      // the stream ended with an error: no more events
    }
  })();

  return async () => {
    stopped = true;
    try {
      await events.return?.();
    } catch {
      // a stream that will not end is left to the host
    }
    await Promise.race([loop, new Promise((r) => setTimeout(r, 1000).unref?.())]);
    await disposeAll();
    await hooks.dispose?.();
  };
}
