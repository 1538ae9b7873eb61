// A double of OpenCode 2's plugin host, rebuilt to the released 2.0.x
// plugin API (the `@opencode/*` packages) as read in OpenCode's repository
// (anomalyco/opencode) on 2026-12-01; docs/OPENCODE.md ("OpenCode 2.0.x")
// has the table of files and commits. Each shape it enforces names its
// source here as (file @ commit). It enforces what that code enforces, so a
// module it accepts and drives is one OpenCode 2.0.x's loader would.
//
// Not OpenCode: no model, no sessions of its own beyond what the subagent
// tool needs, no permissions. Its subagent tool answers like the real one
// (the texts of packages/core/src/tool/plugin/subagent.ts @ 03cce408) with
// a scripted child answer.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** Session hook names (packages/plugin/src/promise/session.ts @ 03545fd3: SessionHooks). */
export const SESSION_HOOKS = new Set(["prompt", "context", "compaction", "generate", "title", "model.request", "http.request", "http.response", "retry"]);
/** Tool hook names (packages/plugin/src/promise/tool.ts @ 196e4612: ToolHooks). */
export const TOOL_HOOKS = new Set(["execute.before", "execute.after"]);

/** The stock agents of OpenCode 2 as `agent.list()` answers them (packages/schema/src/agent.ts @ 3ece701d: Agent.Info {id, mode, hidden, ...}). */
export const STOCK_AGENTS = [
  { id: "build", mode: "primary", hidden: false },
  { id: "plan", mode: "primary", hidden: false },
  { id: "explore", mode: "subagent", hidden: false, description: "Explores the codebase" },
  { id: "general", mode: "subagent", hidden: false, description: "General-purpose agent" },
];

/** The models `model.list()` answers (packages/schema/src/model.ts @ 24c75763: Model.Info {id, modelID, providerID, variants: [{id}], enabled, ...}; the fields the double reads). */
export const STOCK_MODELS = [
  { id: "fake-model", modelID: "fake-model", providerID: "fake", name: "fake-model", variants: [], enabled: true, status: "active" },
  { id: "fake-model-2", modelID: "fake-model-2", providerID: "fake", name: "fake-model-2", variants: [{ id: "high" }], enabled: true, status: "active" },
  { id: "fake-model-3", modelID: "fake-model-3", providerID: "fake", name: "fake-model-3", variants: [], enabled: true, status: "active" },
];

/** Model.Ref.parse (schema/src/model.ts @ 24c75763): provider up to the first "/", the id up to "#", the variant after it. */
export function parseModelRef(input) {
  const providerEnd = input.indexOf("/");
  if (providerEnd <= 0) throw new Error(`Invalid model reference: ${input}`);
  const providerID = input.slice(0, providerEnd);
  const variantStart = input.indexOf("#", providerEnd + 1);
  const id = input.slice(providerEnd + 1, variantStart === -1 ? undefined : variantStart);
  const variant = variantStart === -1 ? undefined : input.slice(variantStart + 1);
  if (!id || providerID.includes("#") || (variant !== undefined && (!variant || variant.includes("#")))) throw new Error(`Invalid model reference: ${input}`);
  return { providerID, id, ...(variant ? { variant } : {}) };
}

export class LoadError extends Error {}

/**
 * Tool.Error (packages/schema/src/tool.ts @ 0f131b3e): a tagged error
 * `{_tag: "Tool.Error", message, error?, metadata?}`. execute.after's
 * `error` must still be one after a callback.
 */
export class ToolError extends Error {
  constructor(message) {
    super(message);
    this._tag = "Tool.Error";
  }
}

/** The entry OpenCode 2 imports from a package directory: exports["./server"], else the main entry (core/src/plugin/module.ts @ 07db2b92: subpaths ["server", ""]). */
export function resolveEntry(pkgDir) {
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  const target = (e) => (typeof e === "string" ? e : (e?.import ?? e?.default));
  const server = target(pkg.exports?.["./server"]);
  if (server) return join(pkgDir, server);
  const main = target(pkg.exports?.["."]) ?? (typeof pkg.exports === "string" ? pkg.exports : undefined) ?? pkg.main ?? "index.js";
  return join(pkgDir, main);
}

/** The default export's decode: `{id: string, effect: function}` or `{id: string, setup: function}` (core/src/plugin/module.ts @ 07db2b92; the same Struct in 1.18.33's config-plugin). */
export function decodeDefinition(mod) {
  const d = mod?.default;
  const fail = (why) => {
    throw new LoadError(`Plugin must export a default definition with an id and an effect or setup function. (${why})`);
  };
  if (d === null || typeof d !== "object" || Array.isArray(d)) fail(`default is ${d === null ? "null" : typeof d}`);
  if (typeof d.id !== "string") fail("id is not a string");
  if (typeof d.effect !== "function" && typeof d.setup !== "function") fail("neither effect nor setup is a function");
  return d;
}

/** Defines readonly fields as non-writable, the rest as ordinary properties. */
function draft(fields, readonly) {
  const o = {};
  for (const [k, v] of Object.entries(fields)) {
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: !readonly.includes(k), configurable: false });
  }
  return o;
}

const isText = (p) => p && p.type === "text" && typeof p.text === "string";
const ROLES = new Set(["system", "user", "assistant", "tool"]);
const PART_TYPES = new Set(["text", "media", "tool-call", "tool-result", "reasoning"]);
const RESULT_TYPES = new Set(["json", "text", "error", "content"]);

/** SessionContext after a callback: `system` SystemPart[], `messages` the LLM Message[] of @opencode/ai (session.ts @ 03545fd3 imports both from @opencode/ai). */
export function checkContext(d) {
  if (!Array.isArray(d.system) || !d.system.every(isText)) throw new TypeError(`context.system is not SystemPart[]: ${JSON.stringify(d.system)}`);
  if (!Array.isArray(d.messages)) throw new TypeError("context.messages is not an array");
  for (const m of d.messages) {
    if (!ROLES.has(m?.role)) throw new TypeError(`message role ${JSON.stringify(m?.role)}`);
    if (!Array.isArray(m.content)) throw new TypeError("message content is not an array");
    for (const c of m.content) {
      if (!PART_TYPES.has(c?.type)) throw new TypeError(`content part type ${JSON.stringify(c?.type)}`);
      if (c.type === "text" && typeof c.text !== "string") throw new TypeError("text part without text");
      if (c.type === "tool-result" && !RESULT_TYPES.has(c.result?.type)) throw new TypeError(`tool result ${JSON.stringify(c.result)}`);
    }
  }
}

/** execute.after's result after a callback: Tool.Result `{output?, content?: string | Content[], metadata?}` (schema/src/tool.ts @ 0f131b3e). */
export function checkToolResult(r) {
  if (r === undefined) return;
  if (typeof r !== "object" || r === null) throw new TypeError("result is not an object");
  const c = r.content;
  if (c !== undefined && typeof c !== "string" && !(Array.isArray(c) && c.every((p) => isText(p) || (p?.type === "file" && typeof p.uri === "string"))))
    throw new TypeError(`result.content ${JSON.stringify(c)}`);
}

/** execute.after's error after a callback: still a Tool.Error with a string message. */
export function checkToolError(e) {
  if (!(e instanceof ToolError) || e._tag !== "Tool.Error" || typeof e.message !== "string") throw new TypeError(`error is not a Tool.Error: ${JSON.stringify(e)}`);
}

/**
 * The session runner's retry schedule for a retryable provider error, as
 * issue 40 measured it on the released 2.x line: exponential from 2 s,
 * capped at 10 s, 10 retries (about 84 s). (packages/core/src/session/runner/retry.ts
 * @ 092a1e7d has the shape: Schedule.exponential("2 seconds"), a decision
 * proposed to the session `retry` hook before each retry, delay
 * normalized when the hook sets one.) The double does not sleep: it adds
 * each delay to the child's `waited`.
 */
export const RETRY_SCHEDULE = Array.from({ length: 10 }, (_, i) => Math.min(2000 * 2 ** i, 10000));

/** A provider's rate limit as the runner gives it to the retry hook (SessionError.Error, schema/src/session-error.ts @ 117c0bf0). */
export const rateLimit = (model) => ({ type: "provider.rate-limit", message: `Rate limit reached for ${model}`, status: 429 });

let ids = 0;
const newSession = () => `ses_${(++ids).toString(36).padStart(4, "0")}v2child`;

/** The host: load a package the way OpenCode 2 does, run setup, drive hooks, events and the subagent tool. */
export class V2Host {
  constructor({
    options = {},
    version = "2.0.17",
    directory = process.cwd(),
    agents = STOCK_AGENTS,
    models = STOCK_MODELS,
    defaultModel = { providerID: "fake", id: "fake-model" },
    childAnswer = (agent, prompt) => `${agent} did: ${prompt}`,
    provider = () => undefined,
    switchFault = undefined,
    retryPause = 0,
  } = {}) {
    /**
     * A fault of switchModel, per call (sessionID, model, n: the call's
     * number from 1): undefined (it works), "throw", or "hang" (it never
     * returns; the session's model stays). The server's API call can fail
     * or stall like any request.
     */
    this.switchFault = switchFault;
    this.switchCalls = 0;
    /** Real ms between a child's attempts (the double otherwise only adds each delay to `waited`). */
    this.retryPause = retryPause;
    /** How long each retry hook round held the runner (ms). */
    this.retryHookMs = [];
    /** The provider: (model "provider/id", child) → undefined (it answers) or a SessionError.Error (the request failed). */
    this.provider = provider;
    /** Every provider request: {session, model, failed}. */
    this.requests = [];
    /** Each session's model (switchModel sets it; session.model.selected is published). */
    this.sessionModels = new Map();
    this.options = options;
    this.models = models;
    this.defaultModel = defaultModel;
    this.version = version;
    this.directory = directory;
    this.agents = agents;
    this.childAnswer = childAnswer;
    this.session = new Map();
    this.tool = new Map();
    this.disposed = [];
    this.queue = [];
    this.waiter = undefined;
    this.ended = false;
    /** Child sessions the subagent tool made: id → {parentID, agent, prompts, model}. */
    this.children = new Map();
    /** What the subagent tool got after execute.before, per call. */
    this.toolInputs = [];
  }

  async load(pkgDir) {
    this.entry = resolveEntry(pkgDir);
    return this.loadDefinition(await import(pathToFileURL(this.entry).href));
  }

  /** Decodes a module's exports and runs its setup with the promise Context (packages/plugin/src/promise/adapter.ts @ 07bc181c). */
  async loadDefinition(mod) {
    this.definition = decodeDefinition(mod);
    const register = (table, names, kind) => async (name, callback) => {
      if (!names.has(name)) throw new TypeError(`unknown ${kind} hook ${JSON.stringify(name)}`);
      if (typeof callback !== "function") throw new TypeError(`${kind}.hook(${name}): callback is not a function`);
      const list = table.get(name) ?? [];
      list.push(callback);
      table.set(name, list);
      return { dispose: async () => (list.splice(list.indexOf(callback), 1), this.disposed.push(`${kind}:${name}`)) };
    };
    const host = this;
    const ctx = {
      app: { name: "opencode", version: this.version, channel: "latest" },
      // adapter.ts @ 07bc181c: `location: host.location`, the project this instance serves.
      location: { directory: this.directory },
      options: this.options,
      agent: {
        list: async () => structuredClone(this.agents),
        get: async ({ agentID }) => structuredClone(this.agents.find((a) => a.id === agentID) ?? null),
      },
      // adapter.ts @ 07bc181c: model.list / model.default (API methods; a `{data}` answer is unwrapped).
      model: {
        list: async () => structuredClone(this.models),
        default: async () => structuredClone(this.defaultModel),
      },
      session: {
        hook: register(this.session, SESSION_HOOKS, "session"),
        // SessionApi.switchModel (the client's POST /api/session/{sessionID}/model, body {model: Model.Ref}); it publishes session.model.selected.
        switchModel: async ({ sessionID, model }) => {
          if (typeof sessionID !== "string" || typeof model?.providerID !== "string" || typeof model?.id !== "string") throw new TypeError("switchModel: {sessionID, model: {providerID, id}}");
          const fault = this.switchFault?.(sessionID, model, ++this.switchCalls);
          if (fault === "throw") throw new Error("switchModel: request failed (fault)");
          if (fault === "hang") return new Promise(() => {});
          if (!this.models.some((m) => m.providerID === model.providerID && m.id === model.id)) throw new Error(`Model ${model.providerID}/${model.id} not found`);
          this.sessionModels.set(sessionID, { providerID: model.providerID, id: model.id, ...(model.variant ? { variant: model.variant } : {}) });
          this.emit({ type: "session.model.selected", data: { sessionID, model } });
        },
      },
      tool: { hook: register(this.tool, TOOL_HOOKS, "tool") },
      event: {
        subscribe: () => ({
          [Symbol.asyncIterator]: () => ({
            next: () =>
              host.queue.length > 0
                ? Promise.resolve({ value: host.queue.shift(), done: false })
                : host.ended
                  ? Promise.resolve({ value: undefined, done: true })
                  : new Promise((resolve) => (host.waiter = resolve)),
            return: async () => {
              host.ended = true;
              host.waiter?.({ value: undefined, done: true });
              return { value: undefined, done: true };
            },
          }),
        }),
      },
    };
    this.cleanup = this.definition.setup ? await this.definition.setup(ctx) : undefined;
    return this;
  }

  async run(table, name, d) {
    for (const cb of table.get(name) ?? []) await cb(d);
    return d;
  }

  /** The session `context` hook with a SessionContext draft (session.ts @ 03545fd3: readonly sessionID, model, kind, agent). */
  async context({ sessionID, agent = "build", kind = "primary", model, system = [], messages = [] }) {
    model ??= this.sessionModels.get(sessionID) ?? this.defaultModel;
    const d = draft({ sessionID, agent, kind, model, system, messages, options: {}, tools: {} }, ["sessionID", "agent", "kind", "model"]);
    await this.run(this.session, "context", d);
    checkContext(d);
    return d;
  }

  /** execute.before (tool.ts @ 196e4612: readonly sessionID, agent, messageID, id; tool and input mutable). */
  async toolBefore({ tool, sessionID, id, input, agent = "build", messageID = "msg_1" }) {
    const d = draft({ tool, sessionID, agent, messageID, id, input }, ["sessionID", "agent", "messageID", "id"]);
    return this.run(this.tool, "execute.before", d);
  }

  /** execute.after, completed (`result` mutable) or error (`error` mutable) (tool.ts @ 196e4612). */
  async toolAfter({ tool, sessionID, id, input, result, error, agent = "build", messageID = "msg_1" }) {
    const failed = error !== undefined;
    const fields = { tool, sessionID, agent, messageID, id, input, status: failed ? "error" : "completed" };
    if (failed) fields.error = error;
    else fields.result = result;
    const d = draft(fields, ["tool", "sessionID", "agent", "messageID", "id", "input", "status"]);
    await this.run(this.tool, "execute.after", d);
    if (failed) checkToolError(d.error);
    else checkToolResult(d.result);
    return d;
  }

  /**
   * The subagent tool as a model's call reaches it: execute.before on the
   * raw input, then the tool runtime's input decode (core/src/tool/runtime.ts
   * @ 0ad62326: decodeInput inside execute, after the hook), then the tool
   * (subagent.ts @ 03cce408), then execute.after with its result or error.
   * Answers {status, text, sessionID?, draft}.
   */
  async subagent({ sessionID, id, input, agent = "build" }) {
    const before = await this.toolBefore({ tool: "subagent", sessionID, id, input: structuredClone(input), agent });
    const got = before.input;
    this.toolInputs.push(structuredClone(got));
    let outcome;
    try {
      outcome = await this.executeSubagent(sessionID, got);
    } catch (err) {
      if (!(err instanceof ToolError)) throw err;
      const after = await this.toolAfter({ tool: "subagent", sessionID, id, input: got, error: err, agent });
      return { status: "error", text: after.error.message, draft: after };
    }
    const content = outcome.status === "completed" ? `<subagent sessionID="${outcome.sessionID}" state="completed">\n${outcome.output}\n</subagent>` : outcome.output;
    const result = { output: outcome, content, metadata: { sessionID: outcome.sessionID, status: outcome.status } };
    const after = await this.toolAfter({ tool: "subagent", sessionID, id, input: got, result, agent });
    const c = after.result.content;
    return { status: outcome.status, text: typeof c === "string" ? c : c.map((x) => x.text ?? "").join(""), sessionID: outcome.sessionID, draft: after };
  }

  /** subagent.ts @ 03cce408: its input schema, agent checks, session checks and output texts. */
  async executeSubagent(parentID, input) {
    const str = (v, name) => {
      if (typeof v !== "string") throw new ToolError(`Invalid tool input: Expected string, got ${JSON.stringify(v)} at ["${name}"]`);
    };
    if (input === null || typeof input !== "object") throw new ToolError("Invalid tool input: Expected object");
    str(input.agent, "agent");
    str(input.description, "description");
    str(input.prompt, "prompt");
    if (input.sessionID !== undefined && !(typeof input.sessionID === "string" && input.sessionID.startsWith("ses")))
      throw new ToolError(`Invalid tool input: Expected a string starting with "ses", got ${JSON.stringify(input.sessionID)}`);
    if (input.model !== undefined) str(input.model, "model");
    const agent = this.agents.find((a) => a.id === input.agent);
    if (!agent) throw new ToolError(`Unknown agent: ${input.agent}`);
    if (agent.mode === "primary") throw new ToolError(`Agent ${input.agent} cannot run as a subagent`);
    let child;
    if (input.sessionID !== undefined) {
      child = this.children.get(input.sessionID);
      if (!child) throw new ToolError(`Subagent session not found: ${input.sessionID}`);
      if (child.parentID !== parentID) throw new ToolError(`Session ${input.sessionID} is not a child of the current session`);
    }
    // subagent.ts @ 03cce408, resolveModel, after the session checks and before the child is made: the explicit model must parse, be available, and have the variant.
    if (input.model !== undefined) {
      let ref;
      try {
        ref = parseModelRef(input.model);
      } catch {
        throw new ToolError(`Invalid model "${input.model}". Use "provider/model" or "provider/model#variant".`);
      }
      const model = this.models.find((m) => m.providerID === ref.providerID && m.id === ref.id);
      if (!model) throw new ToolError(`Model "${ref.providerID}/${ref.id}" is not available. Use the models tool to see what is available.`);
      if (ref.variant !== undefined && !model.variants.some((v) => v.id === ref.variant))
        throw new ToolError(`Variant "${ref.variant}" is not available for "${ref.providerID}/${ref.id}". Available: ${model.variants.map((v) => v.id).join(", ") || "none"}.`);
    }
    if (!child) {
      const childID = newSession();
      child = { id: childID, parentID, agent: agent.id, prompts: [], models: [] };
      this.children.set(childID, child);
    }
    child.prompts.push(input.prompt);
    child.models.push(input.model);
    if (input.background === true) {
      return {
        sessionID: child.id,
        status: "running",
        output: [
          `The subagent is working in the background (sessionID: ${child.id}). You will be notified automatically when it finishes.`,
          "DO NOT sleep, poll for progress, ask the subagent for status, or duplicate this subagent's work; avoid working with the same files or topics it is using.",
          "Work on non-overlapping tasks, or briefly tell the user what you launched and end your response.",
        ].join("\n"),
      };
    }
    if (typeof this.failChild === "function") {
      const why = this.failChild(child, input);
      if (why) throw new ToolError(`Subagent failed (sessionID: ${child.id}): ${why}`);
    }
    // The child's model (subagent.ts @ 03cce408): the call's model input,
    // else the parent's. It is the session's, which switchModel changes.
    if (!this.sessionModels.has(child.id) || input.model !== undefined) {
      const ref = input.model !== undefined ? parseModelRef(input.model) : (this.sessionModels.get(parentID) ?? this.defaultModel);
      this.sessionModels.set(child.id, { providerID: ref.providerID, id: ref.id });
    }
    return this.runChild(child);
  }

  /**
   * The child's run as the session runner makes it: a provider request on
   * the session's model; a failure the runner retries goes to the `retry`
   * hooks with the schedule's decision, and the next attempt reloads the
   * session's model (so a switchModel in between takes); retries spent,
   * session.step.failed and session.execution.failed are published and the
   * subagent call fails `Subagent failed (sessionID: X): <message>`.
   * Answers the tool's outcome, or a promise of it.
   */
  async runChild(child) {
    child.waited = child.waited ?? 0;
    for (let attempt = 1; ; attempt++) {
      const model = this.sessionModels.get(child.id);
      const name = `${model.providerID}/${model.id}`;
      const error = this.provider(name, child);
      this.requests.push({ session: child.id, model: name, failed: Boolean(error) });
      if (!error) {
        child.ranOn = name;
        return { sessionID: child.id, status: "completed", output: this.childAnswer(child.agent, child.prompts.at(-1), child) };
      }
      const scheduled = RETRY_SCHEDULE[attempt - 1];
      const d = draft(
        { sessionID: child.id, agent: child.agent, model: { ...model }, error, attempt: attempt + 1, decision: scheduled === undefined ? { retry: false } : { retry: true, delay: scheduled } },
        ["sessionID", "agent", "model", "error", "attempt"],
      );
      const started = Date.now();
      await this.run(this.session, "retry", d);
      this.retryHookMs.push(Date.now() - started);
      if (!d.decision?.retry) {
        this.emit({ type: "session.step.failed", data: { sessionID: child.id, error, model: { ...model } } });
        this.emit({ type: "session.execution.failed", data: { sessionID: child.id, error } });
        throw new ToolError(`Subagent failed (sessionID: ${child.id}): ${error.message}`);
      }
      child.waited += Number.isFinite(d.decision.delay) && d.decision.delay >= 0 ? Math.ceil(d.decision.delay) : scheduled;
      if (this.retryPause > 0) await new Promise((r) => setTimeout(r, this.retryPause));
    }
  }

  /** An event on the stream: `{id, type, created, data, durable?}` (schema/src/event.ts, session-event.ts @ 03130971: session.deleted {sessionID}). */
  emit(event) {
    const e = { id: `evt_${Date.now()}${Math.random().toString(36).slice(2, 6)}`, created: Date.now(), ...event };
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w({ value: e, done: false });
    } else this.queue.push(e);
  }

  async unload() {
    if (typeof this.cleanup === "function") await this.cleanup();
  }
}
