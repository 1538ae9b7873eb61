// The Observer (src/observer.ts): one `hookwire observe` process, run for
// real, with a real `hookwire serve` writing the state file it watches;
// and its restart schedule, through the spawn seam on mock timers.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { PassThrough, Writable } from "node:stream";
import { after, mock, test } from "node:test";
import observerModule from "../dist/observer.js";
import { alive, observer, sandbox, Serving, waitFor, watchedFile } from "./helpers.mjs";

const { Observer } = observerModule;
const cleanups = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

function open(box, extra = {}) {
  const children = [];
  const o = new Observer({
    binary: observer().bin,
    project: box.folder,
    clientVersion: "0.1.0-test",
    env: box.env,
    initialBackoffMs: 100,
    maxBackoffMs: 400,
    spawn: (cmd, args, opts) => {
      const c = spawn(cmd, args, opts);
      children.push(c);
      return c;
    },
    ...extra,
  });
  cleanups.push(() => o.dispose());
  o.start();
  return { o, children };
}

test("initialize says observer; a session created through hookwire serve is listed, announced by sessions.changed", async () => {
  const box = sandbox();
  const { o } = open(box);
  await waitFor(() => o.state === "ready");
  assert.equal(o.server.observer, true);
  assert.deepEqual(await o.list(), []);

  // The first sessions.changed may come before the alias is visible (the
  // parent's row, say): wait for one after which the alias is listed.
  let listed;
  const announced = new Promise((resolve) => {
    listed = resolve;
  });
  o.onChanged(async () => {
    const list = await o.list().catch(() => []);
    if (list.some((e) => e.alias === "exp-1")) listed(list);
  });
  const serving = await Serving.start(await watchedFile(o), box.env);
  cleanups.push(() => serving.close());
  await serving.delegate("ses_parent1", "explorer", "ses_child1", "Map the repo");
  const list = await Promise.race([announced, new Promise((_, reject) => setTimeout(() => reject(new Error("no sessions.changed listed exp-1 within 15 s")), 15000).unref())]);
  assert.equal(list.length, 1);
  assert.equal(list[0].alias, "exp-1");
  assert.equal(list[0].taskId, "ses_child1");
  assert.equal(list[0].label, "Map the repo");
  assert.equal(list[0].run?.state, "completed");
});

test("killed, the observer is started again and serves again", async () => {
  const box = sandbox();
  const { o, children } = open(box);
  await waitFor(() => o.state === "ready");
  const first = o.pid;
  const states = [];
  o.onStateChange((s) => states.push(s));
  process.kill(first, "SIGKILL");
  await waitFor(() => o.state === "ready" && o.pid !== first, 5000);
  assert.deepEqual(states, ["restarting", "starting", "ready"]);
  assert.equal(o.starts, 2);
  assert.equal(o.lastError, "", "cleared once ready again");
  assert.equal(children[0].signalCode, "SIGKILL");
  assert.deepEqual(await o.list(), []);
});

test("dispose stops the observer with shutdown and exit: it exits 0 by itself, and is not restarted", async () => {
  const box = sandbox();
  const { o, children } = open(box);
  await waitFor(() => o.state === "ready");
  const pid = o.pid;
  await o.dispose();
  assert.equal(o.state, "stopped");
  assert.equal(children[0].exitCode, 0);
  assert.equal(children[0].signalCode, null);
  assert.equal(alive(pid), false);
  await new Promise((r) => setTimeout(r, 300)); // longer than the first backoff
  assert.equal(children.length, 1);
  await assert.rejects(o.list(), /not running \(stopped/);
});

test("a binary that cannot start is tried again with backoff, and its error is kept", async () => {
  const box = sandbox();
  const { o } = open(box, { binary: `${box.dir}/no-such-hookwire` });
  await waitFor(() => o.starts >= 3, 3000);
  assert.match(o.lastError, /^cannot start .*no-such-hookwire: spawn .* ENOENT$/);
  assert.notEqual(o.state, "ready");
  await assert.rejects(o.list(), /not running .*ENOENT/);
});

/** A child process in memory for the spawn seam: it answers nothing, and ends when killed or when told. */
class SilentChild extends EventEmitter {
  constructor(pid) {
    super();
    this.pid = pid;
    this.stdin = new PassThrough();
    this.stdout = new PassThrough();
    this.stderr = new PassThrough();
  }
  exit(code, signal = null) {
    process.nextTick(() => this.emit("exit", code, signal));
  }
  kill(signal) {
    this.exit(null, signal);
    return true;
  }
}

/** A process that said why on stderr and is already gone: writing to it fails with EPIPE before its exit event arrives. */
class DeadChild extends EventEmitter {
  constructor(stderrLine, code) {
    super();
    this.pid = 4242;
    this.stdout = new PassThrough();
    this.stderr = new PassThrough();
    this.stderr.write(`${stderrLine}\n`);
    this.stdin = new Writable({
      write: (_chunk, _enc, done) => {
        const err = Object.assign(new Error("write EPIPE"), { code: "EPIPE" });
        done(err);
        setImmediate(() => this.emit("exit", code, null)); // the exit event comes after the failed write
      },
    });
  }
  kill() {
    return false; // already gone: the kill changes nothing
  }
}

test("a process gone before initialize is written: the error is its exit and stderr, not the failed write", async () => {
  const o = new Observer({
    binary: "hookwire",
    project: "/w",
    clientVersion: "0",
    initialBackoffMs: 60_000,
    spawn: () => new DeadChild('hookwire: unknown command "observe"', 2),
  });
  cleanups.push(() => o.dispose());
  o.start();
  await waitFor(() => o.state === "restarting", 2000);
  assert.equal(o.lastError, 'exited with code 2: hookwire: unknown command "observe"');
});

test("restarts back off: doubling delays up to the cap, reset after a run that stayed up", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  const children = [];
  const o = new Observer({
    binary: "hookwire",
    project: "/w",
    clientVersion: "0",
    initialBackoffMs: 100,
    maxBackoffMs: 400,
    stableMs: 10_000,
    requestTimeoutMs: 60_000,
    spawn: () => {
      const c = new SilentChild(1000 + children.length);
      children.push(c);
      return c;
    },
  });
  const flush = () => new Promise((r) => setImmediate(r));
  o.start();
  const crashAndWait = async (ms) => {
    children.at(-1).exit(1);
    await flush();
    assert.equal(o.state, "restarting");
    const n = children.length;
    t.mock.timers.tick(ms - 1);
    assert.equal(children.length, n, `not restarted before ${ms} ms`);
    t.mock.timers.tick(1);
    assert.equal(children.length, n + 1, `restarted at ${ms} ms`);
  };
  await crashAndWait(100);
  await crashAndWait(200);
  await crashAndWait(400);
  await crashAndWait(400);
  t.mock.timers.tick(10_000); // this run stays up long enough to count as healthy
  await crashAndWait(100);
  assert.equal(o.lastError, "exited with code 1");
  const disposing = o.dispose();
  t.mock.timers.tick(1000); // shutdown is not sent (never ready); the kill ends the child
  await disposing;
  mock.timers.reset();
});

test("an observer that never answers initialize is killed and started again", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  const children = [];
  const o = new Observer({
    binary: "hookwire",
    project: "/w",
    clientVersion: "0",
    initialBackoffMs: 100,
    requestTimeoutMs: 5000,
    spawn: () => {
      const c = new SilentChild(2000 + children.length);
      children.push(c);
      return c;
    },
  });
  const flush = () => new Promise((r) => setImmediate(r));
  o.start();
  await flush();
  assert.equal(o.state, "starting");
  t.mock.timers.tick(5000);
  await flush();
  await flush();
  assert.equal(o.state, "restarting");
  assert.equal(o.lastError, "initialize failed: initialize got no answer within 5000 ms (exited on SIGKILL)");
  t.mock.timers.tick(100);
  assert.equal(children.length, 2);
  const disposing = o.dispose();
  t.mock.timers.tick(1000);
  await disposing;
});
