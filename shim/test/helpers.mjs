// Shared helpers of the shim tests.
import { execFileSync, spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { PassThrough, Writable } from "node:stream";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { FAKE_CAPABILITIES, PROTOCOL_VERSION } from "./fixtures/fake-capabilities.mjs";

export const shimDir = join(dirname(fileURLToPath(import.meta.url)), "..");
export const repoDir = join(shimDir, "..");
export const fakeSidecar = join(shimDir, "test", "fixtures", "fake-sidecar.mjs");

export function fixture(name) {
  return JSON.parse(readFileSync(join(shimDir, "test", "fixtures", name), "utf8"));
}

let built;
/**
 * The real sidecar: HOOKWIRE_BIN, else one built from this repo into a temp
 * dir (go build is cached, and a fresh build cannot be stale), else
 * ../bin/hookwire when Go is not there.
 */
export function realSidecar() {
  if (process.env.HOOKWIRE_BIN) return process.env.HOOKWIRE_BIN;
  if (built) return built;
  const dir = mkdtempSync(join(tmpdir(), "hookwire-shim-bin-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  try {
    execFileSync("go", ["build", "-o", join(dir, "hookwire"), "./cmd/hookwire"], { cwd: repoDir, stdio: ["ignore", "ignore", "inherit"] });
    built = join(dir, "hookwire");
  } catch (err) {
    const inRepo = join(repoDir, "bin", "hookwire");
    if (!existsSync(inRepo)) throw new Error(`no sidecar: set HOOKWIRE_BIN, or install Go to build one (${err.message})`);
    built = inRepo;
  }
  return built;
}

/**
 * A bare line-framed JSON-RPC client of its own sidecar process (binary,
 * args): call(method, params) resolves with the whole reply.
 */
export function lineClient(binary, args = []) {
  const child = spawn(binary, args, { stdio: ["pipe", "pipe", "ignore"] });
  const waiting = new Map();
  createInterface({ input: child.stdout }).on("line", (l) => {
    const m = JSON.parse(l);
    waiting.get(m.id)?.(m);
    waiting.delete(m.id);
  });
  let id = 0;
  const call = (method, params) =>
    new Promise((resolve) => {
      const n = ++id;
      waiting.set(n, resolve);
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: n, method, params }) + "\n");
    });
  return { call, stop: () => child.kill() };
}

/**
 * A stand-in for OpenCode's SDK client that records app.log entries and TUI
 * toasts. agents: the list app.agents() answers with; agentsAfterMs: it
 * answers that late; toastFails: "throw" or "reject".
 */
export function fakeClient({ agents, agentsAfterMs = 0, logThrows = false, toastFails } = {}) {
  const logs = [];
  const toasts = [];
  let agentCalls = 0;
  const client = {
    app: {
      log: (o) => {
        if (logThrows) throw new Error("log broke");
        logs.push(o.body);
        return Promise.resolve(true);
      },
      agents: async () => {
        agentCalls++;
        if (agentsAfterMs > 0) await new Promise((r) => setTimeout(r, agentsAfterMs));
        return { data: agents ?? [] };
      },
    },
    tui: {
      showToast: (o) => {
        if (toastFails === "throw") throw new Error("toast broke");
        toasts.push(o.body);
        return toastFails === "reject" ? Promise.reject(new Error("toast refused")) : Promise.resolve({ data: true });
      },
    },
  };
  return { client, logs, toasts, agentCalls: () => agentCalls };
}

export function scratch() {
  const dir = mkdtempSync(join(tmpdir(), "hookwire-shim-test-"));
  return {
    dir,
    trace: join(dir, "trace.jsonl"),
    log: join(dir, "sidecar.log"),
    records() {
      return existsSync(join(dir, "trace.jsonl"))
        ? readFileSync(join(dir, "trace.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
        : [];
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function waitFor(fn, ms = 5000, step = 20) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, step));
  }
}

export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- A child process in memory, for Sidecar's spawn seam ----------------

const realSetImmediate = setImmediate;
/** One turn of the real event loop (works while node:test's mock timers replace setImmediate). */
export const flushIO = () => new Promise((r) => realSetImmediate(r));

export { FAKE_CAPABILITIES };

/** The answers of a healthy sidecar: initialize, shutdown, status, and an empty patch for every hook. */
export function healthyAnswer(msg) {
  if (msg.method === "initialize") return { result: { protocolVersion: PROTOCOL_VERSION, serverInfo: { name: "fake", version: "0" }, capabilities: FAKE_CAPABILITIES } };
  if (msg.method === "shutdown") return { result: null };
  if (msg.method === "status") return { result: {} };
  return { result: { patch: [] } };
}

/**
 * A fake child process: reads line-framed JSON-RPC from stdin, answers with
 * respond(msg, child) (undefined: no answer), and can be stopped like
 * SIGSTOP (stdin is no longer read, so what is written stays in the
 * writer's buffer) and continued.
 */
export class FakeChild extends EventEmitter {
  constructor(pid, args, respond) {
    super();
    this.pid = pid;
    this.args = args;
    this.exitCode = null;
    this.signalCode = null;
    this.signals = [];
    this.received = [];
    this.stopped = false;
    this.held = [];
    this.stdout = new PassThrough();
    let partial = "";
    const take = (chunk, cb) => {
      const lines = (partial + chunk.toString("utf8")).split("\n");
      partial = lines.pop();
      for (const line of lines) {
        const msg = JSON.parse(line);
        this.received.push(msg);
        if (msg.method === "exit") this.exit(0);
        else if (msg.id !== undefined && this.exitCode === null && this.signalCode === null) {
          const r = respond(msg, this);
          if (r) this.reply({ id: msg.id, ...r });
        }
      }
      cb();
    };
    this.stdin = new Writable({
      write: (chunk, _enc, cb) => {
        if (this.stopped) this.held.push(() => take(chunk, cb));
        else take(chunk, cb);
      },
    });
  }

  reply(obj) {
    if (!this.stdout.writableEnded) this.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...obj }) + "\n");
  }

  /** Like SIGSTOP: stdin is no longer read. */
  stop() {
    this.stopped = true;
  }

  /** Like SIGCONT: what was written meanwhile is read now. */
  cont() {
    this.stopped = false;
    const held = this.held;
    this.held = [];
    for (const f of held) f();
  }

  kill(sig = "SIGTERM") {
    this.signals.push(sig);
    if (this.exitCode === null && this.signalCode === null) {
      this.signalCode = sig;
      process.nextTick(() => {
        this.stdout.end();
        this.emit("exit", null, sig);
      });
    }
    return true;
  }

  exit(code) {
    if (this.exitCode !== null || this.signalCode !== null) return;
    this.exitCode = code;
    process.nextTick(() => {
      this.stdout.end();
      this.emit("exit", code, null);
    });
  }

  unref() {}
}

/** A spawn for Sidecar's seam: every child answers with respond; onSpawn sees each one; spawnTimes holds Date.now() of each spawn. */
export function fakeSpawner(respond = healthyAnswer, onSpawn = () => {}) {
  const children = [];
  const spawnTimes = [];
  let pid = 4_000_000;
  return {
    children,
    spawnTimes,
    spawn: (binary, args) => {
      const child = new FakeChild(pid++, args, respond);
      children.push(child);
      spawnTimes.push(Date.now());
      onSpawn(child);
      return child;
    },
  };
}

/** The pids of this process's children running binary (the sidecars it started). */
export function sidecarPids(binary) {
  let out = "";
  try {
    out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" });
  } catch {
    return []; // ps exits 1 when there is no child
  }
  return out.split("\n").filter((l) => l.includes(binary)).map((l) => Number(l.trim().split(/\s+/)[0]));
}
