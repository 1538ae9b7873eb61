// JSON-RPC 2.0 client over line framing: one JSON value per line, "\n"
// terminated (PROTOCOL.md 1; the sidecar detects it from the first "{").
// JSON.stringify never emits a raw newline, so a line is always one message.
// Measured against vscode-jsonrpc's header framing this saves 30-60 µs per
// small call (README.md, "Cost per hook call").

import type { Readable, Writable } from "node:stream";
import { CODE_INTERNAL_ERROR } from "./contract.gen.js";

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** The connection is closed: the call was never answered. */
export class ClosedError extends Error {}

/** The params could not be serialised: nothing was sent. */
export class EncodeError extends Error {}

/** Writing the message would put more bytes in flight than allowed: nothing was sent. */
export class OverloadedError extends Error {}

/** The caller gave up on the call (its signal aborted); a late reply is dropped. */
export class CancelledError extends Error {}

/** The reply's line passed maxLineBytes: it was discarded unread. */
export class OversizedError extends Error {}

export type SendOptions = {
  /** Gives up on the call: it leaves the pending map and rejects with CancelledError. */
  signal?: AbortSignal;
  /** Refuse to write when the writer's buffer would hold more than this many bytes afterwards. */
  maxBufferedBytes?: number;
  /** Called once the message was handed to the writer (not for a call refused before that). */
  onSent?: () => void;
};

export type ConnectionOptions = {
  /**
   * Called for every reply to a call this side made: one still waiting, or
   * one given up on (cancelled) whose reply came late. A line that answers
   * nothing this side asked (a wrong or repeated id, junk) does not count.
   */
  onAnswer?: () => void;
  /**
   * Longest line kept (bytes, without its newline). A longer one is
   * discarded as it streams in, never held whole nor parsed; the call it
   * answers (its id read from the line's first 4 KiB) fails at once with
   * OversizedError. Default: no limit.
   */
  maxLineBytes?: number;
  /** Called once per line discarded for its length, with the id of the call it answered (undefined when none could be read). */
  onOversized?: (id: number | undefined) => void;
  /** Called for each notification the other side sends (a method, no id). */
  onNotification?: (method: string, params: unknown) => void;
};

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

const NEWLINE = 0x0a;
/** Lines of at least this many UTF-16 units are encoded to UTF-8 by encodeLine; shorter ones are written as strings. */
const LONG_LINE = 16 * 1024;
/** The largest scratch buffer a connection keeps for its long lines (bytes). */
const MAX_SCRATCH = 1 << 20;
const utf8 = new TextEncoder();
/**
 * About how many UTF-16 units of a long array's JSON are made into one
 * string (inPieces): a string under 64 Ki units is allocated among V8's
 * young objects, where flattening it costs a copy; a longer one gets pages
 * of its own, each faulted in anew.
 */
const GROUP_UNITS = 40 * 1024;
/** The objects and arrays marked by inPieces. */
const pieceWise = new WeakSet<object>();

/**
 * Marks a request's params for a long line (a history, issue 50): the
 * arrays among marked are serialised a group of elements at a time, and
 * the plain objects among marked member by member, each down to the marked
 * object or array it holds; everything else is JSON.stringify's as a
 * whole. The line is the same text JSON.stringify makes of the params; it
 * is put together piece by piece, so that no string of the whole line is
 * made (V8's JSON.stringify makes a rope of its parts, which the encoding
 * flattens into a string of the whole, allocated on fresh pages). A marked
 * array's elements must not have a toJSON (a group is serialised as an
 * array of its own, so the index such a method is given would differ).
 */
export function inPieces(...marked: object[]): void {
  for (const o of marked) pieceWise.add(o);
}

/** Appends the JSON of v, a marked object or array, to out in pieces. */
function piecesOf(v: unknown, out: string[]): void {
  if (Array.isArray(v)) {
    out.push("[");
    let k = 4;
    for (let i = 0; i < v.length; ) {
      const group = JSON.stringify(v.slice(i, i + k));
      // The group's elements, without its brackets (a slice of the
      // group's string, flattened once, as it is encoded).
      if (i > 0) out.push(",");
      out.push(group.slice(1, -1));
      i += k;
      // The next group's size follows this one's units per element.
      k = Math.max(1, Math.min(2 * k, Math.floor((k * GROUP_UNITS) / Math.max(group.length, 1))));
    }
    out.push("]");
    return;
  }
  const o = v as Record<string, unknown>;
  let sep = "{";
  for (const key of Object.keys(o)) {
    const member = o[key];
    if (member !== null && typeof member === "object" && pieceWise.has(member)) {
      out.push(sep + JSON.stringify(key) + ":");
      piecesOf(member, out);
    } else {
      // JSON.stringify of the member as it stands in its object (a
      // toJSON is given its name; a value it leaves out is left out).
      const json = JSON.stringify({ [key]: member });
      if (json.length === 2) continue;
      out.push(sep + json.slice(1, -1));
    }
    sep = ",";
  }
  out.push(sep === "{" ? "{}" : "}");
}
/** How much of an oversized line is looked at for its id (the sidecar's own rule for requests, PROTOCOL.md 1). */
const ID_WINDOW = 4096;
/** Calls given up on whose late replies still count as answers (the oldest are forgotten first). */
const MAX_GIVEN_UP = 1024;

export class LineConnection {
  private readonly pending = new Map<number, Pending>();
  private partial: Buffer[] = [];
  private partialBytes = 0;
  /** Inside a line over maxLineBytes: its bytes are dropped until its newline. */
  private discarding = false;
  /** Ids of calls given up on, in the order they were. */
  private readonly givenUp = new Set<number>();
  private nextId = 1;
  private closed = false;
  /** The buffer long lines are encoded into (encodeLine), and whether a write still holds it. */
  private scratch?: Buffer;
  private scratchHeld = false;

  constructor(
    input: Readable,
    private readonly output: Writable,
    private readonly opts: ConnectionOptions = {},
  ) {
    input.on("data", (chunk: Buffer) => this.onData(chunk));
    input.on("end", () => this.close());
    input.on("close", () => this.close());
    input.on("error", () => this.close());
    output.on("error", () => this.close());
  }

  /**
   * Sends a request; resolves with its result, rejects with RpcError,
   * ClosedError, EncodeError, OverloadedError or CancelledError.
   */
  request(method: string, params?: unknown, opts: SendOptions = {}): Promise<unknown> {
    if (this.closed) return Promise.reject(new ClosedError("connection closed"));
    if (opts.signal?.aborted) return Promise.reject(new CancelledError("cancelled before sending"));
    const id = this.nextId++;
    let line: string | Buffer;
    try {
      line =
        params !== null && typeof params === "object" && pieceWise.has(params)
          ? this.encodePieces(`{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":`, params)
          : this.encodeLine(JSON.stringify(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }));
    } catch (err) {
      return Promise.reject(new EncodeError(err instanceof Error ? err.message : String(err)));
    }
    const over = this.overBound(line, opts.maxBufferedBytes);
    if (over) return Promise.reject(new OverloadedError(over));
    return new Promise((resolve, reject) => {
      const signal = opts.signal;
      const onAbort = () => {
        if (!this.pending.delete(id)) return;
        this.givenUp.add(id);
        if (this.givenUp.size > MAX_GIVEN_UP) this.givenUp.delete(this.givenUp.values().next().value as number);
        reject(new CancelledError("cancelled"));
      };
      const settle = () => signal?.removeEventListener("abort", onAbort);
      this.pending.set(id, {
        resolve: (v) => (settle(), resolve(v)),
        reject: (e) => (settle(), reject(e)),
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.write(line);
      opts.onSent?.();
    });
  }

  /** Sends a notification; false when it could not be sent (closed, unserialisable, over maxBufferedBytes). */
  notify(method: string, params?: unknown, maxBufferedBytes?: number): boolean {
    if (this.closed) return false;
    let line: string | Buffer;
    try {
      line = this.encodeLine(JSON.stringify(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }));
    } catch {
      return false;
    }
    if (this.overBound(line, maxBufferedBytes)) return false;
    this.write(line);
    return true;
  }

  /** Bytes written but not yet taken by the other side (the writer's buffer; the OS pipe's own buffer is not counted). */
  get bufferedBytes(): number {
    return this.output.writableLength ?? 0;
  }

  /** Requests sent and neither answered, cancelled nor closed. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Rejects every unanswered call; later calls reject at once. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(new ClosedError("connection closed before the reply"));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Why line must not be written under max, or undefined when it may. */
  private overBound(line: string | Buffer, max: number | undefined): string | undefined {
    if (max === undefined) return undefined;
    const buffered = this.bufferedBytes;
    const bytes = typeof line === "string" ? Buffer.byteLength(line) : line.length;
    if (buffered + bytes <= max) return undefined;
    return `${bytes} bytes would join ${buffered} not yet read by the sidecar (limit ${max})`;
  }

  /**
   * The line of the JSON text json. A long line (a history, issue 50) is
   * encoded to UTF-8 once, in one pass, into a buffer with room for its
   * worst case, its newline put after it (so the text is not copied to add
   * it): the connection's scratch buffer when no write still holds it, else
   * a new one; it is then measured and written as bytes. Writing the
   * string reads a long string twice (its length in bytes, then the
   * bytes), and measuring it for maxBufferedBytes a third time. A short
   * line stays a string: that costs less.
   */
  private encodeLine(json: string): string | Buffer {
    if (json.length < LONG_LINE) return json + "\n";
    const buf = this.lineBuffer(json.length);
    const { written } = utf8.encodeInto(json, buf);
    buf[written] = NEWLINE;
    return buf.subarray(0, written + 1);
  }

  /**
   * The line of a request whose params inPieces marked: head, then the
   * params' JSON, made and encoded piece by piece (piecesOf) into a line
   * buffer as encodeLine's, then "}".
   */
  private encodePieces(head: string, params: object): string | Buffer {
    const pieces = [head];
    piecesOf(params, pieces);
    pieces.push("}");
    let units = 0;
    for (const p of pieces) units += p.length;
    if (units < LONG_LINE) return pieces.join("") + "\n";
    const buf = this.lineBuffer(units);
    let at = 0;
    for (const p of pieces) at += utf8.encodeInto(p, at === 0 ? buf : buf.subarray(at)).written;
    buf[at] = NEWLINE;
    return buf.subarray(0, at + 1);
  }

  /** A buffer for a line of units UTF-16 units and its newline: the scratch buffer when no write holds it, else a new one. */
  private lineBuffer(units: number): Buffer {
    const room = 3 * units + 1; // UTF-8 takes at most 3 bytes per UTF-16 unit
    if (this.scratchHeld || room > MAX_SCRATCH) return Buffer.allocUnsafe(room);
    if (!this.scratch || this.scratch.length < room) this.scratch = Buffer.allocUnsafe(Math.min(MAX_SCRATCH, Math.max(room, 2 * (this.scratch?.length ?? 0))));
    return this.scratch;
  }

  private write(line: string | Buffer): void {
    try {
      if (typeof line !== "string" && this.scratch && line.buffer === this.scratch.buffer) {
        // The writer holds the scratch buffer until its bytes are written.
        this.scratchHeld = true;
        this.output.write(line, () => (this.scratchHeld = false));
      } else {
        this.output.write(line);
      }
    } catch {
      this.close();
    }
  }

  private onData(chunk: Buffer): void {
    const max = this.opts.maxLineBytes ?? Infinity;
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl);
      if (!this.discarding && this.partialBytes + piece.length > max) this.startDiscarding(piece);
      else if (!this.discarding && piece.length > 0) {
        this.partial.push(piece);
        this.partialBytes += piece.length;
      }
      if (nl === -1) return;
      start = nl + 1;
      if (this.discarding) {
        this.discarding = false; // the oversized line ends here
        continue;
      }
      const line = this.partial.length === 1 ? this.partial[0] : Buffer.concat(this.partial, this.partialBytes);
      this.partial = [];
      this.partialBytes = 0;
      this.onLine(line);
    }
  }

  /**
   * The line being read passed maxLineBytes with piece: drop what was held
   * of it and the rest as it comes, and fail the call it answers now.
   */
  private startDiscarding(piece: Buffer): void {
    const head: Buffer[] = [];
    let headBytes = 0;
    for (const b of [...this.partial, piece]) {
      if (headBytes >= ID_WINDOW) break;
      head.push(b.subarray(0, ID_WINDOW - headBytes));
      headBytes += head[head.length - 1].length;
    }
    this.partial = [];
    this.partialBytes = 0;
    this.discarding = true;
    const id = topLevelId(Buffer.concat(head).toString("latin1"));
    const p = id === undefined ? undefined : this.pending.get(id);
    if (p) {
      this.pending.delete(id as number);
      p.reject(new OversizedError(`reply over the ${this.opts.maxLineBytes} bytes allowed; discarded unread`));
    }
    try {
      this.opts.onOversized?.(id);
    } catch {
      // an observer must not break reading
    }
  }

  private onLine(line: Buffer): void {
    let msg: unknown;
    try {
      msg = JSON.parse(line.toString("utf8"));
    } catch {
      return; // not ours to answer; the sidecar writes only JSON-RPC here
    }
    for (const m of Array.isArray(msg) ? msg : [msg]) this.onMessage(m);
  }

  private onMessage(m: unknown): void {
    if (!m || typeof m !== "object") return;
    const r = m as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (r.id === undefined && typeof r.method === "string") return this.notified(r.method, r.params);
    if (typeof r.id !== "number") return; // id-less errors answer nothing we wait for
    const p = this.pending.get(r.id);
    if (!p) {
      if (this.givenUp.delete(r.id)) this.answered(); // late, but an answer: the other side works
      return;
    }
    this.pending.delete(r.id);
    this.answered();
    if (r.error && typeof r.error === "object") {
      const code = typeof r.error.code === "number" ? r.error.code : CODE_INTERNAL_ERROR;
      p.reject(new RpcError(code, typeof r.error.message === "string" ? r.error.message : "error", r.error.data));
    } else {
      p.resolve(r.result);
    }
  }

  private notified(method: string, params: unknown): void {
    try {
      this.opts.onNotification?.(method, params);
    } catch {
      // an observer must not break reading
    }
  }

  private answered(): void {
    try {
      this.opts.onAnswer?.();
    } catch {
      // an observer must not break reading
    }
  }
}

/**
 * The id of a JSON-RPC message whose start is head (its first bytes, read
 * as latin1 so a cut UTF-8 sequence cannot fail): the number of its
 * top-level "id" member when that comes within head, else undefined.
 */
export function topLevelId(head: string): number | undefined {
  let depth = 0;
  let i = 0;
  const n = head.length;
  while (i < n) {
    const c = head[i];
    if (c === '"') {
      // A string: a member name at depth 1 is followed by ':'.
      let j = i + 1;
      while (j < n && head[j] !== '"') j += head[j] === "\\" ? 2 : 1;
      if (j >= n) return undefined;
      const name = head.slice(i + 1, j);
      i = j + 1;
      if (depth !== 1 || name !== "id" || !/^\s*:/.test(head.slice(i, i + 20))) continue;
      const m = /^\s*:\s*(-?\d+)(?=\s*[,}])/.exec(head.slice(i, i + 40));
      return m && Number.isSafeInteger(Number(m[1])) ? Number(m[1]) : undefined;
    }
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    i++;
  }
  return undefined;
}
