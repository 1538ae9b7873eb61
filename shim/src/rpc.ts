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
  ) {
    input.on("data", (chunk: Buffer) => this.onData(chunk));
    input.on("end", () => this.close());
    input.on("close", () => this.close());
    input.on("error", () => this.close());
    output.on("error", () => this.close());
  }

  /** Sends a request; resolves with its result, rejects with RpcError, ClosedError or EncodeError. */
  request(method: string, params?: unknown): Promise<unknown> {
    if (this.closed) return Promise.reject(new ClosedError("connection closed"));
    const id = this.nextId++;
    let line: string;
    try {
      line = JSON.stringify(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }) + "\n";
    } catch (err) {
      return Promise.reject(new EncodeError(err instanceof Error ? err.message : String(err)));
    }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.write(line);
    });
  }

  /** Sends a notification; false when it could not be sent. */
  notify(method: string, params?: unknown): boolean {
    if (this.closed) return false;
    let line: string;
    try {
      line = JSON.stringify(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }) + "\n";
    } catch {
      return false;
    }
    this.write(line);
    return true;
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
