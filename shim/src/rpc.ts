// JSON-RPC 2.0 client over line framing: one JSON value per line, "\n"
// terminated (PROTOCOL.md 1; the sidecar detects it from the first "{").
// JSON.stringify never emits a raw newline, so a line is always one message.
// Measured against vscode-jsonrpc's header framing this saves 30-60 µs per
// small call (README.md, "Cost per hook call").

import type { Readable, Writable } from "node:stream";

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

export type SendOptions = {
  /** Gives up on the call: it leaves the pending map and rejects with CancelledError. */
  signal?: AbortSignal;
  /** Refuse to write when the writer's buffer would hold more than this many bytes afterwards. */
  maxBufferedBytes?: number;
  /** Called once the message was handed to the writer (not for a call refused before that). */
  onSent?: () => void;
};

export type ConnectionOptions = {
  /** Called for every line read: the other side is alive, whatever the line says. */
  onLine?: () => void;
};

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

const NEWLINE = 0x0a;

export class LineConnection {
  private readonly pending = new Map<number, Pending>();
  private partial: Buffer[] = [];
  private nextId = 1;
  private closed = false;

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
    let line: string;
    try {
      line = JSON.stringify(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }) + "\n";
    } catch (err) {
      return Promise.reject(new EncodeError(err instanceof Error ? err.message : String(err)));
    }
    const over = this.overBound(line, opts.maxBufferedBytes);
    if (over) return Promise.reject(new OverloadedError(over));
    return new Promise((resolve, reject) => {
      const signal = opts.signal;
      const onAbort = () => {
        if (this.pending.delete(id)) reject(new CancelledError("cancelled"));
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
    let line: string;
    try {
      line = JSON.stringify(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }) + "\n";
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
  private overBound(line: string, max: number | undefined): string | undefined {
    if (max === undefined) return undefined;
    const buffered = this.bufferedBytes;
    const bytes = Buffer.byteLength(line);
    if (buffered + bytes <= max) return undefined;
    return `${bytes} bytes would join ${buffered} not yet read by the sidecar (limit ${max})`;
  }

  private write(line: string): void {
    try {
      this.output.write(line);
    } catch {
      this.close();
    }
  }

  private onData(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, nl);
      const line = this.partial.length ? Buffer.concat([...this.partial, piece]) : piece;
      this.partial = [];
      start = nl + 1;
      this.onLine(line);
    }
    if (start < chunk.length) this.partial.push(chunk.subarray(start));
  }

  private onLine(line: Buffer): void {
    try {
      this.opts.onLine?.();
    } catch {
      // an observer must not break reading
    }
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
    const r = m as { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (typeof r.id !== "number") return; // notifications and id-less errors answer nothing we wait for
    const p = this.pending.get(r.id);
    if (!p) return;
    this.pending.delete(r.id);
    if (r.error && typeof r.error === "object") {
      const code = typeof r.error.code === "number" ? r.error.code : -32603;
      p.reject(new RpcError(code, typeof r.error.message === "string" ? r.error.message : "error", r.error.data));
    } else {
      p.resolve(r.result);
    }
  }
}
