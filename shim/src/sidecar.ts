// The hookwire child process as the shim sees it: spawn, initialize, calls
// with a deadline, crash and hang detection, restart with backoff, shutdown.
// Nothing here throws to its caller and nothing waits past its deadline:
// every failure becomes a CallResult with ok:false. What OpenCode's process
// holds for the child is bounded: calls that timed out are forgotten, and
// bytes the child has not read yet are capped (maxInFlightBytes).

import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, lstatSync, mkdirSync, renameSync } from "node:fs";
import { dirname } from "node:path";
import { CancelledError, ClosedError, EncodeError, LineConnection, OverloadedError, OversizedError, RpcError } from "./rpc.js";
import type { Logger } from "./log.js";
import { openAppendNoFollow, type Trace } from "./trace.js";
import { NOTIFICATIONS, PROTOCOL_VERSION, type Method, type Notification } from "./contract.gen.js";
import type { Capabilities as ServedCapabilities, InitializeResult, NotificationParams, Params, Results, ServerInfo } from "./protocol.gen.js";

export { PROTOCOL_VERSION };

/** initialize's capabilities as the shim keeps them: taskTools undefined means all tools. */
export type Capabilities = Omit<ServedCapabilities, "taskTools"> & {
  /** Tools whose tool.execute.* calls the sidecar acts on; undefined: all. */
  taskTools?: string[];
};

/** initialize's params as the shim builds them (Params["initialize"], with what it always sends). */
export type InitializeParams = Params["initialize"] & {
  clientInfo: { name: string; version: string };
  config: Record<string, unknown>;
};

/** A request method: one that has a reply (the contract's Results). */
export type RequestMethod = keyof Results;

/**
 * A call's outcome; result is the method's result type (protocol.gen.ts).
 * A reply comes from another process, maybe another version: a reader
 * still checks what it uses.
 */
export type CallResult<R = unknown> =
  | { ok: true; result: R }
  | {
      ok: false;
      reason: "not-ready" | "timeout" | "error" | "closed" | "unserialisable" | "overloaded" | "oversized";
      detail?: string;
      code?: number;
    };

export type SidecarState = "starting" | "ready" | "backoff" | "failed" | "stopped";

/** A notification the sidecar sent on its own: its method and params as the contract types them. */
export type SidecarNotification = { [M in Notification]: { method: M; params: NotificationParams[M] } }[Notification];

export type SidecarOptions = {
  binary: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Computed once per spawn, just before initialize is sent. */
  initParams: () => Promise<InitializeParams>;
  log: Logger;
  trace?: Trace;
  /** File that receives the child's stderr (appended); null discards it. */
  stderrFile?: string | null;
  initTimeoutMs?: number;
  backoffStartMs?: number;
  backoffMaxMs?: number;
  maxCrashes?: number;
  crashWindowMs?: number;
  /**
   * Calls in a row that miss (reach their deadline, or get a reply over
   * maxReplyBytes) with no call answered meanwhile before the child counts
   * as hung: killed (SIGKILL) and restarted like a crash. A late reply to a
   * call given up on counts as an answer; a line that answers nothing the
   * shim asked (a wrong id) does not. 0: never. Default
   * DEFAULT_HUNG_AFTER_MISSES.
   */
  hungAfterMisses?: number;
  /**
   * Longest reply line read from the child (bytes). A longer one is
   * discarded as it streams in, never held whole nor parsed, and the call
   * it answers fails at once ("oversized"). Default DEFAULT_MAX_REPLY_BYTES.
   */
  maxReplyBytes?: number;
  /**
   * Most bytes written to the child's stdin and not yet read by it; a call
   * that would pass it fails open ("overloaded") without being written.
   * Default DEFAULT_MAX_IN_FLIGHT_BYTES.
   */
  maxInFlightBytes?: number;
  /**
   * Called for each notification the sidecar sends on its own
   * (contract.gen.ts's NOTIFICATIONS), with its params as the contract
   * types them; one of another name is dropped.
   */
  onNotification?: (n: SidecarNotification) => void;
  /**
   * The notifications passed to onNotification: by default the serving
   * sidecar's (NOTIFICATIONS); an observer's client names the observer's
   * (OBSERVER_NOTIFICATIONS, `subagents.changed`), whose params it checks
   * itself.
   */
  notifications?: readonly string[];
  /** Called on each state change (the TUI redraws "down" and restarts a given-up observer without polling it). */
  onStateChange?: (state: SidecarState) => void;
  /** Called each time a (re)started sidecar has answered initialize. */
  onReady?: (sidecar: Sidecar) => void;
  /**
   * Called instead of the log's alert when the sidecar refuses initialize,
   * with its error text (plugin.ts names the plugin's and the binary's
   * versions when the refusal is about the protocol version).
   */
  onRejected?: (detail: string, params: InitializeParams) => void;
  /** Starts the child; node's spawn unless a test hands in a fake child. */
  spawn?: SpawnFn;
};

/** The part of node's spawn the sidecar uses: stdio is always [pipe, pipe, stderr]. */
export type SpawnFn = (
  binary: string,
  args: string[],
  options: { stdio: ["pipe", "pipe", number | "ignore"]; env: NodeJS.ProcessEnv; windowsHide: boolean },
) => ChildProcess;

const MAX_STDERR_LOG_BYTES = 10 * 1024 * 1024;
export const DEFAULT_HUNG_AFTER_MISSES = 3;
export const DEFAULT_MAX_IN_FLIGHT_BYTES = 8 * 1024 * 1024;
/**
 * Twice the most the shim ever sends in one request (maxInFlightBytes): a
 * reply replaces at most what it was sent, and the sidecar's transform ops
 * are far smaller than the history they apply to.
 */
export const DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024;

/** A timer that never keeps the host process alive (restart backoff only:
 * deadlines are short and bounded, so they may keep it alive). */
function unrefTimer(fn: () => void, ms: number): NodeJS.Timeout {
  const t = setTimeout(fn, ms);
  t.unref?.();
  return t;
}

export class Sidecar {
  private child?: ChildProcess;
  private conn?: LineConnection;
  private gen = 0;
  private exitedGen = 0;
  private crashTimes: number[] = [];
  private restartTimer?: NodeJS.Timeout;
  private waiters = new Set<() => void>();
  private _state: SidecarState = "stopped";
  /** The state onStateChange was last called with. */
  private toldState: SidecarState = "stopped";
  /** Deadlines missed in a row with nothing read from the child meanwhile. */
  private misses = 0;
  capabilities?: Capabilities;
  serverInfo?: ServerInfo;

  constructor(private readonly opts: SidecarOptions) {}

  get state(): SidecarState {
    return this._state;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Bytes written to the child's stdin that it has not read yet (at most maxInFlightBytes, plus the OS pipe's buffer). */
  get inFlightBytes(): number {
    return this.conn?.bufferedBytes ?? 0;
  }

  /** Requests waiting for their reply (a call that timed out no longer waits). */
  get pendingCalls(): number {
    return this.conn?.pendingCount ?? 0;
  }

  private get maxInFlightBytes(): number {
    return this.opts.maxInFlightBytes ?? DEFAULT_MAX_IN_FLIGHT_BYTES;
  }

  /** Spawns the child; later crashes respawn it by themselves. */
  start(): void {
    if (this._state !== "stopped" || this.gen !== 0) return;
    this.spawnChild();
  }

  /** Whether the sidecar asked for this hook method (false until initialized). */
  wantsHook(method: string): boolean {
    return this._state === "ready" && !!this.capabilities?.hooks.includes(method);
  }

  /**
   * Whether the sidecar acts on this tool's tool.execute.* calls. A sidecar
   * that names its task tools lets the shim keep other tools' outputs (a
   * whole file from `read`) off the pipe.
   */
  wantsTool(tool: unknown): boolean {
    const tools = this.capabilities?.taskTools;
    return !tools || (typeof tool === "string" && tools.includes(tool.toLowerCase()));
  }

  wantsEvent(type: string): boolean {
    return this._state === "ready" && !!this.capabilities?.hooks.includes("event") && !!this.capabilities.events.includes(type);
  }

  /** Resolves true once initialized, false when ms pass first or the sidecar is given up on. */
  whenReady(ms: number): Promise<boolean> {
    if (this._state === "ready") return Promise.resolve(true);
    if (this._state === "failed" || this._state === "stopped" || ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve(this._state === "ready");
      };
      const timer = setTimeout(() => afterPendingIO(done), ms);
      this.waiters.add(done);
    });
  }

  /**
   * Sends a request and waits at most deadlineMs, counting the wait for
   * initialize. Never rejects.
   */
  request<M extends RequestMethod>(method: M, params: Params[M], deadlineMs: number): Promise<CallResult<Results[M]>> {
    // Ready: write at once, so calls leave in the order they were made.
    if (this._state === "ready") return this.send(method, params, deadlineMs);
    const start = Date.now();
    return this.whenReady(deadlineMs).then((ready) =>
      ready ? this.send(method, params, deadlineMs - (Date.now() - start)) : { ok: false, reason: "not-ready", detail: this._state },
    );
  }

  /** Sends a notification if the sidecar is up; drops it otherwise. */
  notify<M extends Method>(method: M, params?: Params[M]): boolean {
    const conn = this.conn;
    if (this._state !== "ready" || !conn) return false;
    const sent = conn.notify(method, params, this.maxInFlightBytes);
    if (sent) this.opts.trace?.write({ ev: "notify", pid: this.pid, method, params });
    return sent;
  }

  private send<M extends RequestMethod>(method: M, params: Params[M], ms: number, conn = this.conn): Promise<CallResult<Results[M]>> {
    if (!conn || ms <= 0) return Promise.resolve({ ok: false, reason: conn ? "timeout" : "closed" });
    const pid = this.pid;
    const gen = this.gen;
    const trace = this.opts.trace;
    const started = Date.now();
    return new Promise<CallResult<Results[M]>>((resolve) => {
      let settled = false;
      const finish = (r: CallResult<Results[M]>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        trace?.write({ ev: "reply", pid, method, ms: Date.now() - started, ...r });
        resolve(r);
      };
      const cancel = new AbortController();
      // When OpenCode's event loop was busy, the reply may already sit in the
      // pipe when this timer fires: timers run before I/O is read. Give up
      // only after the loop has had a turn to read it.
      const timer = setTimeout(
        () =>
          afterPendingIO(() => {
            if (settled) return;
            finish({ ok: false, reason: "timeout", detail: `${method} took over ${ms} ms` });
            // The call leaves the pending map; a late reply is dropped.
            cancel.abort();
            this.onMiss(gen, conn);
          }),
        ms,
      );
      const onSent = trace ? () => trace.write({ ev: "call", pid, method, params }) : undefined;
      conn.request(method, params, { signal: cancel.signal, maxBufferedBytes: this.maxInFlightBytes, onSent }).then(
        // The one place a reply takes its method's type (the contract's).
        (result) => finish({ ok: true, result: result as Results[M] }),
        (err: unknown) => {
          if (err instanceof CancelledError) return;
          const reason =
            err instanceof ClosedError
              ? "closed"
              : err instanceof EncodeError
                ? "unserialisable"
                : err instanceof OverloadedError
                  ? "overloaded"
                  : err instanceof OversizedError
                    ? "oversized"
                    : "error";
          finish({ ok: false, reason, detail: errorText(err), ...(err instanceof RpcError ? { code: err.code } : {}) });
          // A reply too long to read is no answer: it counts toward the hung rule.
          if (err instanceof OversizedError) this.onMiss(gen, conn);
        },
      );
    });
  }

  /**
   * A call on conn missed: it reached its deadline, or its reply was over
   * maxReplyBytes. Enough of them in a row, with no call answered
   * meanwhile, and the child is hung (stopped, deadlocked, stuck in a loop
   * that reads nothing, or writing replies to ids nobody asked): kill it and
   * restart it like a crash. Its stdin buffer goes with it, so no stale backlog
   * delays the calls that come after the restart.
   */
  private onMiss(gen: number, conn: LineConnection): void {
    if (gen !== this.gen || conn !== this.conn || this._state !== "ready") return;
    this.misses++;
    const limit = this.opts.hungAfterMisses ?? DEFAULT_HUNG_AFTER_MISSES;
    if (limit <= 0 || this.misses < limit) return;
    const child = this.child;
    const why = `hung: ${this.misses} calls in a row got no usable reply within their deadline`;
    this.opts.log.once("hung", "warn", `hookwire: sidecar ${why}; killed (SIGKILL), restarting`);
    this.opts.trace?.write({ ev: "hung", pid: child?.pid, misses: this.misses, inFlightBytes: conn.bufferedBytes });
    this.onChildGone(gen, why, true);
    try {
      child?.kill("SIGKILL");
    } catch {
      // already gone
    }
  }

  private spawnChild(): void {
    const gen = ++this.gen;
    this.setState("starting");
    this.capabilities = undefined;
    const { binary, args, env, trace } = this.opts;
    let stderr: number | "ignore" = "ignore";
    if (this.opts.stderrFile) stderr = openStderrLog(this.opts.stderrFile);
    let child: ChildProcess;
    try {
      child = (this.opts.spawn ?? spawn)(binary, args, { stdio: ["pipe", "pipe", stderr], env: env ?? process.env, windowsHide: true });
    } catch (err) {
      if (typeof stderr === "number") closeSync(stderr);
      this.onChildGone(gen, `spawn failed: ${errorText(err)}`);
      return;
    }
    if (typeof stderr === "number") closeSync(stderr);
    this.child = child;
    child.on("error", (err) => this.onChildGone(gen, `process error: ${errorText(err)}`));
    child.on("exit", (code, signal) => this.onChildGone(gen, `exited (code ${code}, signal ${signal})`));
    child.stdin?.on("error", () => {});
    child.stdout?.on("error", () => {});
    // The child must never keep OpenCode alive; exit handlers stop it.
    child.unref();
    unrefStream(child.stdin);
    unrefStream(child.stdout);
    if (!child.stdin || !child.stdout) return;
    const maxReplyBytes = this.opts.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
    const conn = new LineConnection(child.stdout, child.stdin, {
      onAnswer: () => {
        if (gen === this.gen) this.misses = 0;
      },
      maxLineBytes: maxReplyBytes,
      onOversized: (id) => {
        this.opts.log.once(
          "oversized",
          "warn",
          `hookwire: the sidecar wrote a reply line over maxReplyBytes (${maxReplyBytes} bytes); discarded unread, its call passed through`,
        );
        trace?.write({ ev: "oversized", pid: child.pid, id });
      },
      onNotification: (method, params) => {
        if (gen !== this.gen || !(this.opts.notifications ?? (NOTIFICATIONS as readonly string[])).includes(method)) return;
        trace?.write({ ev: "notification", method });
        this.opts.onNotification?.({ method, params } as SidecarNotification);
      },
    });
    this.conn = conn;
    this.misses = 0;
    trace?.write({ ev: "spawn", pid: child.pid, binary, args });
    void this.initialize(gen, conn);
  }

  private async initialize(gen: number, conn: LineConnection): Promise<void> {
    const { log } = this.opts;
    let params: InitializeParams;
    try {
      params = await this.opts.initParams();
    } catch (err) {
      params = { protocolVersion: PROTOCOL_VERSION, clientInfo: { name: "hookwire-opencode", version: "0.0.0" }, config: {} };
      log.once("init-params", "warn", `hookwire: could not build initialize params: ${errorText(err)}`);
    }
    if (gen !== this.gen) return;
    const r = await this.send("initialize", params, this.opts.initTimeoutMs ?? 10_000, conn);
    if (gen !== this.gen || this._state !== "starting") return;
    if (!r.ok) {
      if (r.reason === "error") {
        // The sidecar answered and said no (bad config, other protocol
        // version): restarting would give the same answer.
        if (this.opts.onRejected) this.opts.onRejected(r.detail ?? "", params);
        else log.alert("init-rejected", "error", `hookwire: initialize rejected, hooks pass through: ${r.detail}`, { config: params.config });
        this.giveUp();
        return;
      }
      log.once(`init-${r.reason}`, "warn", `hookwire: initialize failed (${r.reason}${r.detail ? `: ${r.detail}` : ""}); restarting`);
      this.child?.kill("SIGKILL");
      return;
    }
    const caps = parseCapabilities(r.result);
    if (!caps) {
      log.once("init-bad-result", "error", "hookwire: initialize returned no usable capabilities; hooks pass through");
      this.giveUp();
      return;
    }
    this.capabilities = caps;
    this.serverInfo = r.result.serverInfo;
    // Problems of the config that did not stop it (PROTOCOL.md 2): a typo
    // would otherwise only change behaviour silently.
    const warnings = configWarnings(r.result);
    if (warnings.length > 0) {
      log.alert("config-warnings", "warn", `hookwire: config warnings: ${warnings.join("; ")}`, { warnings });
    }
    this._state = "ready";
    // Observers first, so what they send goes out before the calls that
    // waited for initialize.
    try {
      this.opts.onReady?.(this);
    } catch {
      // observers must not break the sidecar
    }
    this.setState("ready");
  }

  /** The child is gone (or given up on as hung: logged already, so quiet). */
  private onChildGone(gen: number, why: string, quiet = false): void {
    if (gen !== this.gen || this.exitedGen === gen) return;
    this.exitedGen = gen;
    const pid = this.child?.pid;
    this.opts.trace?.write({ ev: "exit", pid, why });
    this.conn?.close();
    this.conn = undefined;
    // What the child never read is dropped now, not held until the stream
    // notices the child is gone.
    this.child?.stdin?.destroy();
    this.capabilities = undefined;
    if (this._state === "failed" || this._state === "stopped") return;
    const now = Date.now();
    const window = this.opts.crashWindowMs ?? 60_000;
    this.crashTimes = this.crashTimes.filter((t) => now - t < window);
    this.crashTimes.push(now);
    const max = this.opts.maxCrashes ?? 5;
    if (this.crashTimes.length >= max) {
      this.opts.log.alert(
        "gave-up",
        "error",
        `hookwire: sidecar stopped ${this.crashTimes.length} times within ${Math.round(window / 1000)} s (last: ${why}); not restarting, hooks pass through`,
      );
      this.opts.trace?.write({ ev: "gave-up", why });
      this.setState("failed");
      return;
    }
    if (!quiet) this.opts.log.once("crash", "warn", `hookwire: sidecar ${why}; restarting`);
    const start = this.opts.backoffStartMs ?? 100;
    const delay = Math.min(start * 2 ** (this.crashTimes.length - 1), this.opts.backoffMaxMs ?? 5_000);
    this.setState("backoff");
    this.restartTimer = unrefTimer(() => {
      this.restartTimer = undefined;
      if (this._state === "backoff") this.spawnChild();
    }, delay);
  }

  private giveUp(): void {
    this.setState("failed");
    this.stopChild();
  }

  private setState(s: SidecarState): void {
    this._state = s;
    if (s !== "starting" && s !== "backoff") for (const w of [...this.waiters]) w();
    if (s !== this.toldState) {
      this.toldState = s;
      try {
        this.opts.onStateChange?.(s);
      } catch {
        // an observer of the state never stops the sidecar
      }
    }
  }

  /** Asks the child to exit (exit notification, stdin closed) and kills it after graceMs. */
  private stopChild(graceMs = 1000): Promise<void> {
    const child = this.child;
    const conn = this.conn;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve();
      }, graceMs);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      conn?.notify("exit");
      setTimeout(() => child.stdin?.end(), 50);
    });
  }

  /** Graceful stop: shutdown (bounded), exit, then kill if the child lingers. */
  async dispose(graceMs = 1000): Promise<void> {
    if (this._state === "stopped") return;
    clearTimeout(this.restartTimer);
    const wasReady = this._state === "ready";
    this.setState("stopped");
    if (wasReady && this.conn) await this.send("shutdown", undefined, Math.min(graceMs, 500), this.conn);
    await this.stopChild(graceMs);
  }

  /** Last-moment stop for process exit: synchronous, signal only. */
  killNow(): void {
    clearTimeout(this.restartTimer);
    this._state = "stopped";
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      try {
        // SIGTERM lets the sidecar flush its state file (PROTOCOL.md 1).
        child.kill("SIGTERM");
      } catch {
        // already gone
      }
    }
  }
}

/** Runs fn after the I/O already waiting has been read and dispatched. */
function afterPendingIO(fn: () => void): void {
  setImmediate(fn);
}

function parseCapabilities(result: InitializeResult | null): Capabilities | undefined {
  if (!result || typeof result !== "object") return undefined;
  if (result.protocolVersion !== undefined && result.protocolVersion !== PROTOCOL_VERSION) return undefined;
  const c = result.capabilities;
  if (!c || typeof c !== "object") return undefined;
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  const caps: Capabilities = { hooks: strings(c.hooks), events: strings(c.events), methods: strings(c.methods) };
  if (Array.isArray(c.taskTools)) caps.taskTools = strings(c.taskTools).map((t) => t.toLowerCase());
  return caps;
}

/** The initialize result's `warnings`, strings only. */
export function configWarnings(result: InitializeResult | null): string[] {
  const w: unknown = result?.warnings;
  return Array.isArray(w) ? w.filter((x): x is string => typeof x === "string") : [];
}

function unrefStream(s: unknown): void {
  const u = (s as { unref?: () => void } | null)?.unref;
  if (typeof u === "function") {
    try {
      u.call(s);
    } catch {
      // not a socket in this runtime
    }
  }
}

/** Opens the stderr log for appending, rotating it once past 10 MiB. */
function openStderrLog(file: string): number | "ignore" {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      const st = lstatSync(file);
      if (st.isFile() && st.size > MAX_STDERR_LOG_BYTES) renameSync(file, `${file}.1`);
    } catch {
      // no file yet
    }
    return openAppendNoFollow(file);
  } catch {
    return "ignore";
  }
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  try {
    return typeof err === "string" ? err : JSON.stringify(err);
  } catch {
    return String(err);
  }
}
