// Shared helpers of the extension's tests: the real sidecar, a sandbox with
// its own HOME and state directory, a client that drives `hookwire serve`
// the way OpenCode's shim does, and polling.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import rpc from "vscode-jsonrpc/node";
import { createFakeVscode } from "./fake-vscode.mjs";
import appModule from "../dist/app.js";

export const { activateWith, COMMANDS, VIEW_ID } = appModule;
export const extDir = join(dirname(fileURLToPath(import.meta.url)), "..");
export const repoDir = join(extDir, "..", "..");

let built;
/** The real sidecar: HOOKWIRE_BIN, else one built from this repo into a temp dir. */
export function sidecar() {
  if (process.env.HOOKWIRE_BIN) return process.env.HOOKWIRE_BIN;
  if (built) return built;
  const dir = mkdtempSync(join(tmpdir(), "hookwire-vscode-bin-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  execFileSync("go", ["build", "-o", join(dir, "hookwire"), "./cmd/hookwire"], { cwd: repoDir, stdio: ["ignore", "ignore", "inherit"] });
  built = join(dir, "hookwire");
  return built;
}

let checked;
/**
 * The binary the extension runs as `<bin> observe`: the real sidecar,
 * which must have the observe command.
 */
export function observer() {
  if (checked) return checked;
  const bin = sidecar();
  const probe = spawnSync(bin, ["observe", "--help"], { encoding: "utf8" });
  if (probe.status !== 0) throw new Error(`${bin} has no observe command (exit ${probe.status}): ${probe.stderr.trim()}`);
  checked = { bin };
  return checked;
}

const sandboxes = [];
process.on("exit", () => {
  for (const d of sandboxes) rmSync(d, { recursive: true, force: true });
});

/**
 * A temp dir with its own HOME and XDG_STATE_HOME and a project folder;
 * env runs the observer under test (HOOKWIRE_BIN) there.
 */
export function sandbox(name = "proj") {
  const dir = mkdtempSync(join(tmpdir(), "hookwire-vscode-test-"));
  sandboxes.push(dir);
  const home = join(dir, "home");
  mkdirSync(home);
  const project = (n) => {
    const p = join(dir, "projects", n);
    mkdirSync(p, { recursive: true });
    return p;
  };
  const env = {
    ...process.env,
    HOME: home,
    XDG_STATE_HOME: join(dir, "xdg", "state"),
    HOOKWIRE_BIN: observer().bin,
  };
  return { dir, home, env, project, folder: project(name) };
}

/** Starts the extension on a fresh fake vscode with the given folders. */
export function start({ folders, env, config, pick, observerOptions } = {}) {
  const fake = createFakeVscode({ folders, config, pick });
  const context = { subscriptions: [], extension: { packageJSON: { version: "0.1.0-test" } } };
  const app = activateWith(fake.host, context, {
    env,
    observer: { initialBackoffMs: 100, maxBackoffMs: 400, requestTimeoutMs: 4000, ...observerOptions },
  });
  const status = () => fake.statusBarItems[0];
  const view = () => fake.treeViews.get(VIEW_ID);
  return { fake, app, context, status, view };
}

/** The state file an observer watches, from its status. */
export async function watchedFile(obs) {
  const s = await obs.status();
  return s.stateFile?.path ?? s.observer?.file;
}

/**
 * A real `hookwire serve --state FILE`, driven like OpenCode's shim drives
 * it (header framing, through vscode-jsonrpc).
 */
export class Serving {
  static async start(stateFile, env) {
    const child = spawn(sidecar(), ["serve", "--state", stateFile], { env, stdio: ["pipe", "pipe", "pipe"] });
    const s = new Serving(child);
    await s.conn.sendRequest("initialize", { protocolVersion: 1, clientInfo: { name: "vscode-test", version: "0" } });
    return s;
  }

  constructor(child) {
    this.child = child;
    this.stderr = "";
    child.stderr.on("data", (d) => (this.stderr += d));
    this.exited = new Promise((r) => child.on("exit", r));
    this.conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
    this.conn.listen();
    this.calls = 0;
  }

  /** The orchestrator in parent delegates a task to agent; OpenCode answers with session child. */
  async delegate(parent, agent, child, description) {
    const callID = `call_${++this.calls}`;
    const req = (method, params) => this.conn.sendRequest(method, params);
    await req("chat.message", { input: { sessionID: parent, agent: "orchestrator" }, output: { message: {}, parts: [] } });
    const input = { tool: "task", sessionID: parent, callID };
    const args = { description, prompt: "do it", subagent_type: agent };
    await req("tool.execute.before", { input, output: { args } });
    await req("tool.execute.after", {
      input: { ...input, args },
      output: { title: description, metadata: {}, output: `<task id="${child}" state="completed">\n<task_result>\nok\n</task_result>\n</task>` },
    });
  }

  /** The orchestrator resumes alias; the call is left pending (the run shows as running). Returns its callID. */
  async resume(parent, agent, alias, description) {
    const callID = `call_${++this.calls}`;
    await this.conn.sendRequest("tool.execute.before", {
      input: { tool: "task", sessionID: parent, callID },
      output: { args: { description, prompt: "again", subagent_type: agent, task_id: alias } },
    });
    return callID;
  }

  /** OpenCode's native task tool threw for callID: the history holds an errored task part. */
  async failTask(parent, callID, error) {
    await this.conn.sendRequest("chat.messages.transform", {
      input: {},
      output: {
        messages: [
          { info: { id: "msg_u", role: "user", sessionID: parent, agent: "orchestrator" }, parts: [{ type: "text", text: "go" }] },
          { info: { id: "msg_a", role: "assistant", sessionID: parent }, parts: [{ type: "tool", tool: "task", callID, state: { status: "error", error } }] },
        ],
      },
    });
  }

  async close() {
    try {
      await this.conn.sendRequest("shutdown");
      await this.conn.sendNotification("exit");
    } catch {
      this.child.kill("SIGKILL");
    }
    await this.exited;
    this.conn.dispose();
  }
}

export async function waitFor(fn, ms = 5000, step = 20) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
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
