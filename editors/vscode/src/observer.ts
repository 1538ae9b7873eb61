// The `hookwire observe` process of one workspace folder and the JSON-RPC
// connection to it (vscode-jsonrpc, Content-Length framing). It owns the
// process's life: start, the initialize handshake, restart with backoff
// when the process dies, and a graceful stop (shutdown, exit) with a kill
// as the fallback. No vscode imports: the extension and the tests drive it
// alike.
import { spawn as nodeSpawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { createMessageConnection, ErrorCodes, ResponseError, StreamMessageReader, StreamMessageWriter, type MessageConnection } from "vscode-jsonrpc/node";

export type ObserverState = "starting" | "ready" | "restarting" | "stopped";

export interface ObserverOptions {
  /** The hookwire executable. */
  binary: string;
  /** The workspace folder; the observer finds the state file from it (--project). */
  project: string;
  /** This extension's version, for initialize's clientInfo. */
  clientVersion: string;
  env?: NodeJS.ProcessEnv;
  /** The first restart's delay; each failure in a row doubles it up to maxBackoffMs. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** A run that stays up this long resets the backoff. */
  stableMs?: number;
  /** How long initialize, sessions.list and status may take. */
  requestTimeoutMs?: number;
  /** Lines of the observer's stderr and of this client's own notes. */
  log?: (line: string) => void;
  /** A seam for tests; node's spawn by default. */
  spawn?: (cmd: string, args: string[], opts: SpawnOptions) => ChildProcess;
}

export interface InitializeResult {
  protocolVersion?: number;
  serverInfo?: { name?: string; version?: string };
  capabilities?: unknown;
  observer?: boolean;
}

type Listener<T> = (value: T) => void;

/** A `hookwire observe` process, kept running until dispose. */
export class Observer {
  readonly project: string;
  private readonly opts: Required<Omit<ObserverOptions, "env" | "log" | "spawn">> & Pick<ObserverOptions, "env">;
  private readonly log: (line: string) => void;
  private readonly spawnFn: (cmd: string, args: string[], opts: SpawnOptions) => ChildProcess;
  private child?: ChildProcess;
  private conn?: MessageConnection;
  private timer?: NodeJS.Timeout;
  private backoffMs: number;
  private startedAt = 0;
  private disposed = false;
  private changedListeners: Listener<void>[] = [];
  private stateListeners: Listener<ObserverState>[] = [];
  private exited?: Promise<void>;
  private initFailure = "";

  state: ObserverState = "stopped";
  /** The observer's initialize answer, while ready. */
  server?: InitializeResult;
  /** Why the last run ended or failed to start; "" while none has. */
  lastError = "";
  /** Processes started so far (the first start counts). */
  starts = 0;

  constructor(options: ObserverOptions) {
    this.project = options.project;
    this.opts = {
      binary: options.binary,
      project: options.project,
      clientVersion: options.clientVersion,
      env: options.env,
      initialBackoffMs: options.initialBackoffMs ?? 500,
      maxBackoffMs: options.maxBackoffMs ?? 30_000,
      stableMs: options.stableMs ?? 10_000,
      requestTimeoutMs: options.requestTimeoutMs ?? 5_000,
    };
    this.log = options.log ?? (() => {});
    this.spawnFn = options.spawn ?? nodeSpawn;
    this.backoffMs = this.opts.initialBackoffMs;
  }

  /** The running process's pid, if one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** listener runs when the sessions may have changed: on each ready, and on each sessions.changed or subagents.changed. */
  onChanged(listener: () => void): { dispose(): void } {
    this.changedListeners.push(listener);
    return { dispose: () => (this.changedListeners = this.changedListeners.filter((l) => l !== listener)) };
  }

  onStateChange(listener: (s: ObserverState) => void): { dispose(): void } {
    this.stateListeners.push(listener);
    return { dispose: () => (this.stateListeners = this.stateListeners.filter((l) => l !== listener)) };
  }

  start(): void {
    if (this.disposed || this.child) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.launch();
  }

  /** The remembered sessions (the raw `sessions.list` result). Rejects unless ready. */
  list(sessionID?: string): Promise<unknown> {
    return this.request("sessions.list", sessionID ? { sessionID } : {});
  }

  /** A parent's subagents (the raw `subagents.list` result, PROTOCOL.md 4.10). Rejects unless ready, and on an older observer without it. */
  subagents(sessionID: string): Promise<unknown> {
    return this.request("subagents.list", { sessionID, limit: 200 });
  }

  /** The observer's `status` result. Rejects unless ready. */
  status(): Promise<unknown> {
    return this.request("status", {});
  }

  /** Stops the process (shutdown and exit, then a kill if it lingers) and never restarts it. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const child = this.child;
    const conn = this.conn;
    const exited = this.exited;
    if (child && conn && this.state === "ready") {
      try {
        await withTimeout(conn.sendRequest("shutdown"), 1000, "shutdown");
        await conn.sendNotification("exit");
      } catch {
        // It is going away either way; the kill below makes sure.
      }
    }
    child?.stdin?.end();
    if (child && exited) {
      const gone = await Promise.race([exited.then(() => true), delay(1000).then(() => false)]);
      if (!gone) {
        child.kill("SIGKILL");
        await Promise.race([exited, delay(1000)]);
      }
    }
    this.setState("stopped");
    this.changedListeners = [];
    this.stateListeners = [];
  }

  private async request(method: string, params: object): Promise<unknown> {
    const conn = this.conn;
    if (!conn || this.state !== "ready") throw new Error(`the observer is not running (${this.state}${this.lastError ? `: ${this.lastError}` : ""})`);
    return withTimeout(conn.sendRequest(method, params), this.opts.requestTimeoutMs, method);
  }

  private launch(): void {
    const args = ["observe", "--project", this.opts.project, "--framing", "header"];
    this.starts++;
    this.startedAt = Date.now();
    this.setState("starting");
    let child: ChildProcess;
    try {
      child = this.spawnFn(this.opts.binary, args, { cwd: this.opts.project, env: this.opts.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
    } catch (err) {
      this.ended(`cannot start ${this.opts.binary}: ${message(err)}`);
      return;
    }
    this.child = child;
    let done = false;
    let resolveExited!: () => void;
    this.exited = new Promise((r) => (resolveExited = r));
    const end = (why: string) => {
      if (done) return;
      done = true;
      resolveExited();
      if (this.child === child) this.ended(why);
    };
    child.on("error", (err) => end(`cannot start ${this.opts.binary}: ${err.message}`));
    // A run that ends before its handshake usually said why on stderr (an
    // old hookwire without observe: unknown command); keep that line.
    child.on("exit", (code, signal) => {
      const why = signal ? `exited on ${signal}` : `exited with code ${code}`;
      end(!ready && lastLine ? `${why}: ${lastLine}` : why);
    });
    // A write to a process that died fails with EPIPE; the exit handler reports the death.
    child.stdin?.on("error", () => {});
    let ready = false;
    let lastLine = "";
    forwardLines(child.stderr, (line) => {
      lastLine = line;
      this.log(line);
    });

    const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    this.conn = conn;
    conn.onNotification("sessions.changed", () => this.emitChanged());
    conn.onNotification("subagents.changed", () => this.emitChanged());
    conn.onError(() => {}); // read/write errors end with the process's exit, reported there
    conn.listen();
    withTimeout(
      conn.sendRequest<InitializeResult>("initialize", {
        protocolVersion: 1,
        clientInfo: { name: "hookwire-vscode", version: this.opts.clientVersion },
      }),
      this.opts.requestTimeoutMs,
      "initialize",
    ).then(
      (result) => {
        if (this.child !== child || this.disposed) return;
        ready = true;
        this.server = result ?? {};
        this.lastError = "";
        this.setState("ready");
        this.emitChanged();
      },
      (err) => {
        if (this.child !== child || this.disposed) return;
        // A write to a process that is dying fails (EPIPE) before its exit
        // event: the exit and its stderr say why, the failed write does not.
        if (!writeFailed(err)) this.initFailure = `initialize failed: ${message(err)}`;
        child.kill("SIGKILL"); // its exit schedules the restart
      },
    );
  }

  /** The process is gone: note why and, unless disposed, start another after the backoff. */
  private ended(why: string): void {
    this.conn?.dispose();
    this.conn = undefined;
    this.child = undefined;
    this.server = undefined;
    if (this.disposed) return;
    this.lastError = this.initFailure ? `${this.initFailure} (${why})` : why;
    this.initFailure = "";
    if (Date.now() - this.startedAt >= this.opts.stableMs) this.backoffMs = this.opts.initialBackoffMs;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.opts.maxBackoffMs);
    this.log(`observer ${why}; restarting in ${wait} ms`);
    this.setState("restarting");
    this.emitChanged(); // its entries are no longer live
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.disposed) this.launch();
    }, wait);
  }

  private setState(s: ObserverState): void {
    if (this.state === s) return;
    this.state = s;
    for (const l of this.stateListeners) l(s);
  }

  private emitChanged(): void {
    for (const l of this.changedListeners) l();
  }
}

function forwardLines(stream: NodeJS.ReadableStream | null | undefined, emit: (line: string) => void): void {
  if (!stream) return;
  let partial = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const l of lines) if (l.trim() !== "") emit(l.length > 2000 ? `${l.slice(0, 2000)}…` : l);
    if (partial.length > 64 * 1024) partial = partial.slice(-2000);
  });
  stream.on("error", () => {});
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} got no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The request never reached the process: writing it failed. */
function writeFailed(err: unknown): boolean {
  return err instanceof ResponseError && err.code === ErrorCodes.MessageWriteError;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
