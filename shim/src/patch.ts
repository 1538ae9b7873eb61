// Applies the sidecar's JSON Patch (RFC 6902: add, replace, remove) to
// OpenCode's output object in place. All or nothing: when an operation fails,
// the ones already applied are undone, so output is left as it was.

import fastJsonPatch from "fast-json-patch";
import type { Operation } from "fast-json-patch";
import { record } from "./projection.js";

const { applyOperation, unescapePathComponent } = fastJsonPatch;

export type PatchOp = { op: "add" | "replace" | "remove"; path: string; value?: unknown };

export type PatchResult = { ok: true; applied: number } | { ok: false; error: string };

const ALLOWED = new Set(["add", "replace", "remove"]);

/** Checks the shape of a reply's patch without looking at the document. */
export function isPatch(value: unknown): value is PatchOp[] {
  if (!Array.isArray(value)) return false;
  for (const op of value) {
    if (!op || typeof op !== "object") return false;
    const o = op as Record<string, unknown>;
    if (typeof o.op !== "string" || !ALLOWED.has(o.op)) return false;
    if (typeof o.path !== "string" || (o.path !== "" && !o.path.startsWith("/"))) return false;
    if (o.path === "") return false; // replacing the whole output cannot be done in place
    if (o.op !== "remove" && !("value" in o)) return false;
  }
  return true;
}

/**
 * Applies patch to doc in place. Returns ok:false (and leaves doc as it was)
 * when the patch is malformed or any operation does not apply.
 */
export function applyPatchInPlace(doc: unknown, patch: unknown): PatchResult {
  if (!isPatch(patch)) return { ok: false, error: "malformed patch" };
  if (patch.length === 0) return { ok: true, applied: 0 };
  if (!doc || typeof doc !== "object") return { ok: false, error: "output is not an object" };
  const undo: Array<() => void> = [];
  try {
    for (const op of patch) {
      const fast = appendPart(doc, op) ?? replaceError(doc, op);
      if (fast) {
        undo.push(fast);
        continue;
      }
      checkOwnPath(doc, op);
      const inverse = inverseOf(doc, op);
      applyOperation(doc, op as Operation, true, true, true);
      undo.push(inverse);
    }
    return { ok: true, applied: patch.length };
  } catch (err) {
    for (let i = undo.length - 1; i >= 0; i--) {
      try {
        undo[i]();
      } catch {
        // Keep undoing the rest: each step touches only its own location.
      }
    }
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

// The op the sidecar sends most (a part added to a message: cache-stable
// mode adds one to every managed user message, PROTOCOL.md 4.4), matched by
// its path alone. Digits only, so no escapes and no prototype keys.
const APPEND_PART = /^\/messages\/(0|[1-9][0-9]{0,8})\/parts\/-$/;

/**
 * Applies an add of a part at the end of a message's parts directly, as
 * fast-json-patch would, and returns its undo; undefined (nothing done) for
 * any other op or when the path does not lead to an array: fast-json-patch
 * then applies it, or says why not.
 */
function appendPart(doc: object, op: PatchOp): (() => void) | undefined {
  if (op.op !== "add" || op.value === undefined) return undefined;
  const m = APPEND_PART.exec(op.path);
  if (!m) return undefined;
  const parts = record(arrayAt((doc as { messages?: unknown }).messages, Number(m[1])))?.parts;
  if (!Array.isArray(parts)) return undefined;
  const at = parts.length;
  parts.push(op.value);
  return () => {
    if (parts.length > at) parts.splice(at, 1);
  };
}

// The other op the sidecar sends on every request: guidance on an errored
// task part (PROTOCOL.md 4.1), in a long history one per errored part.
const REPLACE_ERROR = /^\/messages\/(0|[1-9][0-9]{0,8})\/parts\/(0|[1-9][0-9]{0,8})\/state\/error$/;

/**
 * Applies a replace of a part's state.error directly, as fast-json-patch
 * would, and returns its undo; undefined (nothing done) for any other op or
 * when the path does not lead to an existing error member: fast-json-patch
 * then applies it, or says why not.
 */
function replaceError(doc: object, op: PatchOp): (() => void) | undefined {
  if (op.op !== "replace" || op.value === undefined) return undefined;
  const m = REPLACE_ERROR.exec(op.path);
  if (!m) return undefined;
  const message = record(arrayAt((doc as { messages?: unknown }).messages, Number(m[1])));
  const part = record(arrayAt(message?.parts, Number(m[2])));
  const state = record(part?.state);
  if (!state || !Object.prototype.hasOwnProperty.call(state, "error")) return undefined;
  const old = state.error;
  state.error = op.value;
  return () => {
    state.error = old;
  };
}

function arrayAt(v: unknown, i: number): unknown {
  return Array.isArray(v) && i < v.length ? v[i] : undefined;
}

/**
 * Throws unless each object on op's path has the member the path names as
 * its own: an inherited one (toString, constructor) is not part of the
 * JSON document, though fast-json-patch finds it. Without this, a replace
 * of /args/toString made an own property where RFC 6902 says the target
 * must exist, and /args/constructor/x reached Object itself. The last step
 * of an add may name a new member. Arrays and non-objects are left to
 * fast-json-patch, which checks indexes and reports missing paths.
 */
function checkOwnPath(doc: object, op: PatchOp): void {
  const keys = op.path.split("/").slice(1).map(unescapePathComponent);
  let node: unknown = doc;
  for (let i = 0; i < keys.length; i++) {
    if (node === null || typeof node !== "object") return;
    const key = keys[i];
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key)) return;
      node = node[Number(key)];
      continue;
    }
    if (!Object.prototype.hasOwnProperty.call(node, key)) {
      if (i === keys.length - 1 && op.op === "add") return;
      throw new Error(`path ${op.path} does not exist in the output (no member "${key}")`);
    }
    node = (node as Record<string, unknown>)[key];
  }
}

/** Returns a function that undoes op, computed before op is applied. */
function inverseOf(doc: object, op: PatchOp): () => void {
  const keys = op.path.split("/").slice(1).map(unescapePathComponent);
  const last = keys.pop() as string;
  let parent: unknown = doc;
  for (const k of keys) {
    if (parent === null || typeof parent !== "object") return noop;
    parent = (parent as Record<string, unknown>)[k];
  }
  if (parent === null || typeof parent !== "object") return noop;
  if (Array.isArray(parent)) {
    const arr = parent;
    const index = last === "-" ? arr.length : Number(last);
    if (op.op === "add") return () => { if (arr.length > index) arr.splice(index, 1); };
    const old = arr[index];
    if (op.op === "replace") return () => { arr[index] = old; };
    return () => { arr.splice(index, 0, old); };
  }
  const obj = parent as Record<string, unknown>;
  const had = Object.prototype.hasOwnProperty.call(obj, last);
  const old = obj[last];
  return () => {
    if (had) obj[last] = old;
    else delete obj[last];
  };
}

function noop(): void {}
