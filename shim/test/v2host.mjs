// A double of OpenCode 2's plugin host, built to its plugin API as published
// in the OpenCode repository (anomalyco/opencode) at the commit
// docs/OPENCODE.md names ("OpenCode 2"). It enforces what that code
// enforces, so a module it accepts is one OpenCode 2's loader accepts:
//
//   - module resolution: a package's `server` subpath first, then its main
//     entry (core/src/plugin/module.ts: `subpaths: ["server", ""]`);
//   - module decode: the default export must be an object with a string
//     `id` and an `effect` or `setup` function (the `Definition` schema; a
//     function default, the 1.x form, fails: "Plugin must export a default
//     definition with an id and an effect or setup function.");
//   - setup: called once with the promise Context; hooks are registered on
//     it (`session.hook(name, cb)`, `tool.hook(name, cb)`), each answered
//     with a Registration `{dispose}`, names limited to the hook specs of
//     that commit; `event.subscribe()` is an AsyncIterable of events
//     `{id, type, created, data, durable?}`; setup may return a cleanup;
//   - hooks: each callback gets one mutable draft and is awaited; the host
//     reads the draft afterwards. Fields the API marks readonly are
//     non-writable here (a write throws in strict-mode code), and the draft
//     is checked against the shapes of that commit after every callback.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** The hook names of that commit: plugin/src/promise/session.ts SessionHooks, promise/tool.ts ToolHooks. */
export const SESSION_HOOKS = new Set(["prompt", "context", "title", "model.request", "http.request", "http.response", "retry"]);
export const TOOL_HOOKS = new Set(["execute.before", "execute.after"]);

export class LoadError extends Error {}

/** The entry OpenCode 2 imports from a package directory: exports["./server"], else the main entry. */
export function resolveEntry(pkgDir) {
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  const target = (e) => (typeof e === "string" ? e : (e?.import ?? e?.default));
  const server = target(pkg.exports?.["./server"]);
  if (server) return join(pkgDir, server);
  const main = target(pkg.exports?.["."]) ?? (typeof pkg.exports === "string" ? pkg.exports : undefined) ?? pkg.main ?? "index.js";
  return join(pkgDir, main);
}

/** The `Definition` decode of core/src/plugin/module.ts. */
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

/** SessionContext after a callback: `system` SystemPart[], `messages` LLM Message[]. */
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

/** execute.after's result after a callback: Tool.Result `{output?, content?: string | Content[], metadata?}`. */
export function checkToolResult(r) {
  if (r === undefined) return;
  if (typeof r !== "object" || r === null) throw new TypeError("result is not an object");
  const c = r.content;
  if (c !== undefined && typeof c !== "string" && !(Array.isArray(c) && c.every((p) => isText(p) || (p?.type === "file" && typeof p.uri === "string"))))
    throw new TypeError(`result.content ${JSON.stringify(c)}`);
}

/** The host: load a package the way OpenCode 2 does, run setup, drive hooks and events. */
export class V2Host {
  constructor({ options = {}, version = "2.0.0" } = {}) {
    this.options = options;
    this.version = version;
    this.session = new Map();
    this.tool = new Map();
    this.disposed = [];
    this.queue = [];
    this.waiter = undefined;
    this.ended = false;
  }

  async load(pkgDir) {
    this.entry = resolveEntry(pkgDir);
    return this.loadDefinition(await import(pathToFileURL(this.entry).href));
  }

  /** Decodes a module's exports and runs its setup. */
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
      options: this.options,
      session: { hook: register(this.session, SESSION_HOOKS, "session") },
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
    this.cleanup = await this.definition.setup(ctx);
    return this;
  }

  async run(table, name, d) {
    for (const cb of table.get(name) ?? []) await cb(d);
    return d;
  }

  /** The session `context` hook with a SessionContext draft. */
  async context({ sessionID, agent = "build", model = { id: "fake-model", providerID: "fake" }, system = [], messages = [] }) {
    const d = draft({ sessionID, agent, model, system, messages, options: {}, tools: {} }, ["sessionID", "agent", "model"]);
    await this.run(this.session, "context", d);
    checkContext(d);
    return d;
  }

  async toolBefore({ tool, sessionID, id, input, agent = "build", messageID = "msg_1" }) {
    const d = draft({ tool, sessionID, agent, messageID, id, input }, ["sessionID", "agent", "messageID", "id"]);
    return this.run(this.tool, "execute.before", d);
  }

  async toolAfter({ tool, sessionID, id, input, result, agent = "build", messageID = "msg_1" }) {
    const d = draft({ tool, sessionID, agent, messageID, id, input, status: "completed", result }, ["tool", "sessionID", "agent", "messageID", "id", "input", "status"]);
    await this.run(this.tool, "execute.after", d);
    checkToolResult(d.result);
    return d;
  }

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
