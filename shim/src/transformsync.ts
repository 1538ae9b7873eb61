// Incremental chat.messages.transform (PROTOCOL.md 4.6). OpenCode hands the
// hook the whole history before every LLM request; sending all of it each
// time makes a session cost O(n²). So the shim remembers, per session, the
// projection it last sent and the base the sidecar acknowledged for it, and
// sends only what changed: new messages, changed parts, and the keeps that
// say which earlier messages stay, in which order (compaction, revert).
// A base the sidecar does not hold (a restart, an eviction) gets -32005 and
// the shim resends in full. Patch paths index OpenCode's array either way.

import { CODE_INVALID_PARAMS, CODE_UNKNOWN_BASE } from "./contract.gen.js";
import { projectMessage, record, str, textRead, type ProjectedMessage, type ProjectedPart } from "./projection.js";
import { inPieces } from "./rpc.js";
import type { CallResult, Sidecar } from "./sidecar.js";
import type { ChatMessagesTransformParams, TransformResult } from "./protocol.gen.js";

/** The sidecar does not hold the base an incremental request named (the contract's error code). */
export { CODE_UNKNOWN_BASE };

export type SyncLimits = {
  /** Sessions whose projection is held; the least recently used goes first. */
  maxSessions?: number;
  /** Bytes the held projections may take (strings at two bytes a character, plus a fixed cost per message and part). */
  maxBytes?: number;
};

export const DEFAULT_SYNC_SESSIONS = 16;
export const DEFAULT_SYNC_BYTES = 16 << 20;
const MESSAGE_BYTES = 160;
const PART_BYTES = 120;

/** An op of one message, its path without the leading /messages/I. */
type RelOp = { op: string; path: string; value?: unknown; copy?: Copy };

type Held = {
  base: string;
  msgs: ProjectedMessage[];
  /** Each message, flat (flatten): what the comparison walk reads. */
  flat: unknown[][];
  /** The ops each message got in the reply that made the base (reapply runs, PROTOCOL.md 4.6). */
  ops: (RelOp[] | undefined)[];
  /** Counted bytes per message (its projection), and of the ops it got. */
  sizes: number[];
  opSizes: number[];
  /** Message id → its first position in msgs, built when a message is not where it was (most calls never need it). */
  index?: Map<string, number>;
  bytes: number;
};

type Edit = { edit: number; info?: ProjectedMessage["info"]; parts?: PartItem[] };
type Item = { keep: number; count: number } | { message: ProjectedMessage } | Edit;
type PartItem = { keep: number; count: number } | { part: ProjectedPart };

/** One transform call's params, and how to take its reply. */
export type Prepared = {
  params: ChatMessagesTransformParams;
  /** Whether params is the incremental form (so a refusal means: resend in full). */
  incremental: boolean;
  /** The full form, with sync, for the resend. */
  full(): ChatMessagesTransformParams;
  /**
   * Works out what commit holds of the messages sent whole (their flat
   * form and counted bytes): left out of the params' making, so that it can
   * be done while the sidecar works on them. commit does it when it was not.
   */
  complete(): void;
  /**
   * Takes a successful reply: holds its base (or forgets the session when it
   * has none) and returns the patch to apply, reapply runs expanded; or an
   * error when the runs do not fit (nothing held then).
   */
  commit(result: unknown): { ok: true; patch: unknown } | { ok: false; error: string };
};

type Run = { at: number; keep: number; count: number };

const MESSAGE_PATH = /^\/messages\/(0|[1-9][0-9]{0,8})(\/.*)$/;

function isIndex(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0;
}

/** How a held op's value is copied for OpenCode: it is a primitive, an object of primitives, or deeper. */
const enum Copy {
  None,
  Shallow,
  Deep,
}

function copyKind(v: unknown): Copy {
  if (v === null || typeof v !== "object") return Copy.None;
  if (Array.isArray(v)) return Copy.Deep;
  for (const k in v) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== null && typeof x === "object") return Copy.Deep;
  }
  return Copy.Shallow;
}

/** A copy of v, whose kind is copyKind(v). */
function copyOf(v: unknown, kind: Copy | undefined): unknown {
  return kind === Copy.None ? v : kind === Copy.Shallow ? { ...(v as Record<string, unknown>) } : structuredClone(v);
}

/** A held op as OpenCode gets it: at message i, its value a copy, so that what OpenCode does to one request's copy never reaches the held ops. */
function materialize(rel: RelOp, prefix: string): Record<string, unknown> {
  if (!("value" in rel)) return { op: rel.op, path: prefix + rel.path };
  return { op: rel.op, path: prefix + rel.path, value: copyOf(rel.value, rel.copy) };
}

/** An op of the reply made relative to its message i (prefix: /messages/i), its value copied to hold. */
function relative(op: Record<string, unknown>, prefix: number): RelOp {
  const rel: RelOp = { op: op.op as string, path: (op.path as string).slice(prefix) };
  if ("value" in op) {
    rel.copy = copyKind(op.value);
    rel.value = copyOf(op.value, rel.copy);
  }
  return rel;
}

function opBytes(o: RelOp): number {
  const v = o.value as { text?: unknown } | string | undefined;
  const text = typeof v === "string" ? v : typeof v?.text === "string" ? v.text : "";
  return 64 + strBytes(o.path) + strBytes(text);
}

function strBytes(s: string | undefined): number {
  return s === undefined ? 0 : 2 * s.length;
}

function sizeOf(m: ProjectedMessage): number {
  const i = m.info;
  let n = MESSAGE_BYTES + strBytes(i.id) + strBytes(i.role) + strBytes(i.agent) + strBytes(i.sessionID);
  for (const p of m.parts) {
    n += PART_BYTES + strBytes(p.type) + strBytes(p.text) + strBytes(p.tool) + strBytes(p.callID) + strBytes(p.state?.status) + strBytes(p.state?.error);
  }
  return n;
}

// A held message, flat: its info (id, role, agent, sessionID), then
// FIELDS slots per part (type, text, synthetic, tool, callID, state status,
// state error; NO_STATE for no state), the short repeated strings
// canonical. On a long history the comparison walk is mostly cache misses
// (OpenCode's copy is fresh each time); one array per message and a few hot
// strings keep the held side to a cache line or so per part. Comparisons
// are plain equality: a held field is a string, a boolean or absent, so
// equal means the same projection; a raw field of another type reads as
// changed, which costs an edit, never a wrong keep.
const INFO = 4;
const FIELDS = 7;
const NO_STATE = Symbol("no state");

const canonical = new Map<string, string>();
const MAX_CANONICAL = 4096;
const MAX_CANONICAL_LENGTH = 64;

function intern(v: string | undefined): string | undefined {
  if (v === undefined || v.length > MAX_CANONICAL_LENGTH) return v;
  const c = canonical.get(v);
  if (c !== undefined) return c;
  if (canonical.size < MAX_CANONICAL) canonical.set(v, v);
  return v;
}

function flatten(m: ProjectedMessage): unknown[] {
  const parts = m.parts;
  const fp: unknown[] = new Array(INFO + parts.length * FIELDS);
  fp[0] = m.info.id;
  fp[1] = intern(m.info.role);
  fp[2] = intern(m.info.agent);
  fp[3] = intern(m.info.sessionID);
  for (let j = 0; j < parts.length; j++) {
    const p = parts[j];
    const o = INFO + j * FIELDS;
    fp[o] = intern(p.type);
    fp[o + 1] = p.text;
    fp[o + 2] = p.synthetic;
    fp[o + 3] = intern(p.tool);
    fp[o + 4] = p.callID;
    fp[o + 5] = p.state === undefined ? NO_STATE : intern(p.state.status);
    fp[o + 6] = p.state?.error;
  }
  return fp;
}

/** Whether raw (an OpenCode message's info) projects to the info of a flat held message. */
function sameInfo(fp: unknown[], raw: Record<string, unknown> | undefined): boolean {
  if (raw === undefined) return fp[0] === undefined && fp[1] === undefined && fp[2] === undefined && fp[3] === undefined;
  return fp[0] === raw.id && fp[1] === raw.role && fp[2] === raw.agent && fp[3] === raw.sessionID;
}

/** Whether raw (an OpenCode part) projects to part j of a flat held message, without building the projection. */
function samePart(fp: unknown[], j: number, raw: unknown): boolean {
  const o = INFO + j * FIELDS;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return fp[o] === undefined && fp[o + 1] === undefined && fp[o + 2] === undefined && fp[o + 3] === undefined && fp[o + 4] === undefined && fp[o + 5] === NO_STATE;
  }
  const r = raw as Record<string, unknown>;
  // A reasoning part's text is not projected (textRead): held undefined, not compared.
  if (fp[o] !== r.type || (fp[o + 1] !== r.text && textRead(r.type)) || fp[o + 2] !== r.synthetic || fp[o + 3] !== r.tool || fp[o + 4] !== r.callID) return false;
  const state = r.state;
  if (fp[o + 5] === NO_STATE) return state === undefined || state === null || typeof state !== "object" || Array.isArray(state);
  if (state === null || typeof state !== "object") return false;
  const st = state as Record<string, unknown>;
  return fp[o + 5] === st.status && fp[o + 6] === st.error;
}

/**
 * The id index of the history that replaces held's, when held has one and
 * the new history (flat) keeps held's first lead messages in place and
 * either all of held's or all of its own are among them: held's index
 * then becomes the new one, with the ids of messages taken off removed and
 * those appended added. It is taken from held, which is being replaced.
 */
function carryIndex(held: Held, flat: unknown[][], lead: number): Map<string, number> | undefined {
  const index = held.index;
  if (!index || (lead !== held.flat.length && lead !== flat.length)) return undefined;
  held.index = undefined;
  for (let k = lead; k < held.flat.length; k++) {
    const id = held.flat[k][0] as string | undefined;
    if (id !== undefined && index.get(id) === k) index.delete(id);
  }
  for (let i = lead; i < flat.length; i++) {
    const id = flat[i][0] as string | undefined;
    if (id !== undefined && !index.has(id)) index.set(id, i);
  }
  return index;
}

/** Message id → its first position in msgs. */
function indexOf(msgs: ProjectedMessage[]): Map<string, number> {
  const index = new Map<string, number>();
  for (let i = 0; i < msgs.length; i++) {
    const id = msgs[i].info.id;
    if (id !== undefined && !index.has(id)) index.set(id, i);
  }
  return index;
}

/**
 * Holds, per session, the projection last acknowledged by the sidecar, and
 * builds each call's params against it. One per sidecar client.
 */
export class TransformSync {
  private readonly held = new Map<string, Held>();
  private bytes = 0;
  private readonly maxSessions: number;
  private readonly maxBytes: number;

  constructor(limits: SyncLimits = {}) {
    this.maxSessions = limits.maxSessions ?? DEFAULT_SYNC_SESSIONS;
    this.maxBytes = limits.maxBytes ?? DEFAULT_SYNC_BYTES;
  }

  /** Sessions held and their counted bytes (for tests and the trace). */
  get stats(): { sessions: number; bytes: number } {
    return { sessions: this.held.size, bytes: this.bytes };
  }

  /** Forgets one session's base (its session.deleted): nothing of it is kept until LRU would drop it. */
  forgetSession(session: string): void {
    this.forget(session);
  }

  /** Forgets every base: the next call of each session goes in full. */
  reset(): void {
    this.held.clear();
    this.bytes = 0;
  }

  /**
   * The params of one call for OpenCode's output. undefined when output has
   * no messages array (nothing to send). The session is the sessionID of
   * the first message that has one; a history without one goes in full,
   * without sync.
   */
  prepare(input: unknown, output: unknown): Prepared | undefined {
    const o = record(output);
    if (!o || !Array.isArray(o.messages)) return undefined;
    const raw = o.messages as unknown[];
    let session: string | undefined;
    for (const m of raw) {
      session = str(record(record(m)?.info)?.sessionID);
      if (session !== undefined) break;
    }
    const held = session === undefined ? undefined : this.held.get(session);
    const msgs: ProjectedMessage[] = new Array(raw.length);
    const sizes: number[] = new Array(raw.length);
    const flat: unknown[][] = new Array(raw.length);
    // How many leading messages are where they were in the base: when all
    // the base's are (messages appended) or all the new history's are (the
    // tail taken back), the base's id index carries over (carryIndex).
    let lead = 0;
    const items: Item[] = [];
    let run: { keep: number; count: number } | undefined;
    for (let i = 0; i < raw.length; i++) {
      const m = raw[i];
      const mr = record(m);
      const info = record(mr?.info);
      const id = str(info?.id);
      // The base message of the same id: at the same position in the usual
      // case (messages appended), else looked up.
      let k: number | undefined;
      if (held && id !== undefined) {
        if (i < held.flat.length && held.flat[i][0] === id) k = i;
        else k = (held.index ??= indexOf(held.msgs)).get(id);
      }
      if (k === i && lead === i) lead++;
      if (held && k !== undefined) {
        const parts = Array.isArray(mr?.parts) ? (mr.parts as unknown[]) : [];
        const fp = held.flat[k];
        const infoSame = sameInfo(fp, info);
        const oldParts = (fp.length - INFO) / FIELDS;
        let partsSame = parts.length === oldParts;
        for (let j = 0; partsSame && j < parts.length; j++) partsSame = samePart(fp, j, parts[j]);
        if (infoSame && partsSame) {
          msgs[i] = held.msgs[k];
          flat[i] = fp;
          sizes[i] = held.sizes[k];
          if (run && run.keep + run.count === k) run.count++;
          else items.push((run = { keep: k, count: 1 }));
          continue;
        }
        run = undefined;
        const next = projectMessage(raw[i]);
        msgs[i] = next;
        sizes[i] = sizeOf(next);
        const edit: Edit = { edit: k };
        if (!infoSame) edit.info = next.info;
        if (!partsSame) {
          const pitems: PartItem[] = [];
          let prun: { keep: number; count: number } | undefined;
          for (let j = 0; j < parts.length; j++) {
            if (j < oldParts && samePart(fp, j, parts[j])) {
              next.parts[j] = held.msgs[k].parts[j];
              if (prun && prun.keep + prun.count === j) prun.count++;
              else pitems.push((prun = { keep: j, count: 1 }));
            } else {
              prun = undefined;
              pitems.push({ part: next.parts[j] });
            }
          }
          edit.parts = pitems;
        }
        flat[i] = flatten(next);
        items.push(edit);
        continue;
      }
      run = undefined;
      msgs[i] = projectMessage(raw[i]); // its size and flat form: complete()
      items.push({ message: msgs[i] });
    }
    const inputOrEmpty = input ?? {};
    const full = () => {
      const output = { messages: msgs };
      const params = session === undefined ? { input: inputOrEmpty, output } : { input: inputOrEmpty, output, sync: { session } };
      // A long history's line is made message group by message group
      // (rpc.ts); a short one is joined whole there.
      inPieces(params, output, msgs);
      return params;
    };
    let completed = false;
    const complete = () => {
      if (completed) return;
      completed = true;
      for (let i = 0; i < msgs.length; i++) {
        if (flat[i] !== undefined) continue;
        sizes[i] = sizeOf(msgs[i]);
        flat[i] = flatten(msgs[i]);
      }
    };
    const incremental = held !== undefined;
    return {
      params: incremental ? { input: inputOrEmpty, sync: { session, base: held.base, messages: items, reapply: true } } : full(),
      incremental,
      full,
      complete,
      commit: (result) => {
        complete();
        const r = record(result);
        const runs = r?.reapply;
        if (session === undefined) {
          return runs === undefined ? { ok: true, patch: r?.patch } : { ok: false, error: "reapply runs without sync" };
        }
        const index = held && this.held.get(session) === held ? carryIndex(held, flat, lead) : undefined;
        this.forget(session);
        // The runs name the base this call was prepared against (held), which
        // a later commit cannot change: a Held is not modified (but for its
        // index, which the next base takes over only when held is the base
        // being replaced).
        const taken = takeReply(r?.patch, runs, incremental ? held : undefined, msgs.length);
        if (!taken.ok) return taken;
        const base = str(r?.base);
        if (!base || !taken.ops) return { ok: true, patch: taken.patch };
        let bytes = 0;
        for (let i = 0; i < sizes.length; i++) bytes += sizes[i] + taken.opSizes[i];
        if (bytes <= this.maxBytes) {
          while (this.held.size >= this.maxSessions || this.bytes + bytes > this.maxBytes) {
            const oldest = this.held.keys().next().value as string;
            this.forget(oldest);
          }
          this.held.set(session, { base, msgs, flat, index, ops: taken.ops, sizes, opSizes: taken.opSizes, bytes });
          this.bytes += bytes;
        }
        return { ok: true, patch: taken.patch };
      },
    };
  }

  private forget(session: string): void {
    const h = this.held.get(session);
    if (!h) return;
    this.bytes -= h.bytes;
    this.held.delete(session);
  }

  /**
   * Sends one transform call: incremental when a base is held, resent in
   * full (within the same deadline) when the sidecar does not hold that
   * base or cannot apply the change. undefined: nothing to send.
   */
  async request(
    sidecar: Pick<Sidecar, "request">,
    method: "chat.messages.transform",
    input: unknown,
    output: unknown,
    deadlineMs: number,
  ): Promise<CallResult<TransformResult> | undefined> {
    const started = Date.now();
    const prepared = this.prepare(input, output);
    if (!prepared) return undefined;
    const sent = sidecar.request(method, prepared.params, deadlineMs);
    prepared.complete(); // while the sidecar reads the request (it was written, when the sidecar was ready)
    let r = await sent;
    if (!r.ok && prepared.incremental && r.reason === "error" && (r.code === CODE_UNKNOWN_BASE || r.code === CODE_INVALID_PARAMS)) {
      r = await sidecar.request(method, prepared.full(), deadlineMs - (Date.now() - started));
    }
    if (!r.ok) return r;
    const taken = prepared.commit(r.result);
    if (!taken.ok) return { ok: false, reason: "error", detail: taken.error };
    // The patch with the runs expanded: the shim's own, checked where it is applied.
    return { ok: true, result: { ...r.result, patch: taken.patch as TransformResult["patch"] } };
  }
}

/**
 * A reply's patch with its reapply runs expanded, message by message (each
 * message's ops from its run, else from patch, in their order: PROTOCOL.md
 * 4.6), and the ops each of the n messages got, to hold with the new base.
 * ops is undefined when an op is not under /messages/I (nothing can be held
 * then; the patch still applies). Runs that do not fit the base they name,
 * or an op of patch for a message a run covers, are an error.
 */
function takeReply(
  patch: unknown,
  runs: unknown,
  held: Held | undefined,
  n: number,
): { ok: true; patch: unknown; ops?: (RelOp[] | undefined)[]; opSizes: number[] } | { ok: false; error: string } {
  const opSizes: number[] = new Array(n).fill(0);
  if (!Array.isArray(patch)) return { ok: true, patch, opSizes }; // the caller says what is wrong with it
  const ops: (RelOp[] | undefined)[] = new Array(n);
  let attributable = true;
  const mine: Own[] = [];
  for (const op of patch) {
    const o = record(op);
    const m = o && typeof o.path === "string" ? MESSAGE_PATH.exec(o.path) : null;
    const i = m ? Number(m[1]) : n;
    if (!o || !m || i >= n || typeof o.op !== "string") {
      attributable = false;
      continue;
    }
    mine.push({ i, op: o });
  }
  if (runs === undefined) {
    if (!attributable) return { ok: true, patch, opSizes };
    for (const { i, op } of mine) hold(ops, opSizes, i, op);
    return { ok: true, patch, ops, opSizes };
  }
  if (!Array.isArray(runs) || !held) return { ok: false, error: "reapply runs that name no base" };
  if (!attributable) return { ok: false, error: "reapply runs beside an op outside /messages/I" };
  // The runs, checked, as this module's own objects: expand's loops then
  // meet only shapes that outlive a request (a reply's objects are new
  // every time, and V8 starts counting a function's heat over whenever one
  // of its caches meets a new shape, so a function that reads them never
  // gets optimized).
  const checked: Run[] = [];
  let next = 0;
  for (const run of runs) {
    const x = record(run);
    if (!x || !isIndex(x.at) || !isIndex(x.keep) || !isIndex(x.count) || x.count < 1 || x.at < next || x.at + x.count > n || x.keep + x.count > held.msgs.length) {
      return { ok: false, error: `reapply run ${JSON.stringify(run)} does not fit` };
    }
    checked.push({ at: x.at, keep: x.keep, count: x.count });
    next = x.at + x.count;
  }
  return expand(mine, checked, held, n, ops, opSizes);
}

type Own = { i: number; op: Record<string, unknown> };

/** takeReply's expansion of checked runs and the ops of the other messages (mine, in reply order). */
function expand(
  mine: Own[],
  runs: Run[],
  held: Held,
  n: number,
  ops: (RelOp[] | undefined)[],
  opSizes: number[],
): { ok: true; patch: unknown; ops: (RelOp[] | undefined)[]; opSizes: number[] } | { ok: false; error: string } {
  const from: number[] = new Array(n).fill(-1); // message → the base message whose ops it gets
  for (const run of runs) for (let j = 0; j < run.count; j++) from[run.at + j] = run.keep + j;
  const own: Own[][] = new Array(n);
  for (const m of mine) {
    if (from[m.i] >= 0) return { ok: false, error: `an op for message ${m.i}, which a reapply run covers` };
    (own[m.i] ??= []).push(m);
  }
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const k = from[i];
    if (k >= 0) {
      const rels = held.ops[k];
      ops[i] = rels;
      opSizes[i] = held.opSizes[k];
      if (rels) {
        const prefix = `/messages/${i}`;
        for (let j = 0; j < rels.length; j++) out.push(materialize(rels[j], prefix));
      }
      continue;
    }
    const list = own[i];
    if (!list) continue;
    for (const m of list) {
      out.push(m.op);
      hold(ops, opSizes, i, m.op);
    }
  }
  return { ok: true, patch: out, ops, opSizes };
}

/** Holds op, one of the reply's for message i, with that message's ops. */
function hold(ops: (RelOp[] | undefined)[], opSizes: number[], i: number, op: Record<string, unknown>): void {
  const rel = relative(op, `/messages/${i}`.length);
  (ops[i] ??= []).push(rel);
  opSizes[i] += opBytes(rel);
}
