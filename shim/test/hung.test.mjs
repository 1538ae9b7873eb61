// A hung sidecar, for real: the real hookwire process stopped with SIGSTOP
// (and continued with SIGCONT), through real pipes. The shim must detect it,
// hold no unbounded buffer, and answer new calls within their deadline once
// it recovers. A call answered within its deadline is one whose guidance
// arrived (a late reply passes the output through unchanged); the verdicts
// never read the wall clock, whose windows are checked on a mocked clock in
// deadline.test.mjs. Deadlines here are generous (CI machines are shared).
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { after, test } from "node:test";
import { createHookwire } from "../dist/plugin.js";
import { DEFAULT_MAX_IN_FLIGHT_BYTES } from "../dist/options.js";
import { alive, fakeClient, realSidecar, scratch, sleep, waitFor } from "./helpers.mjs";

const PARENT = "ses_parent000000000000000001";
const instances = [];
const scratches = [];
const stopped = new Set();
after(async () => {
  for (const pid of stopped) if (alive(pid)) process.kill(pid, "SIGCONT");
  for (const h of instances) await h.dispose();
  for (const s of scratches) s.cleanup();
});

async function open(options = {}) {
  const s = scratch();
  scratches.push(s);
  const fc = fakeClient({ agents: [{ name: "explorer", mode: "subagent" }, { name: "oracle", mode: "subagent" }] });
  const h = createHookwire(
    { client: fc.client },
    { binary: realSidecar(), trace: s.trace, logFile: s.log, state: false, timeoutMs: 1000, transformTimeoutMs: 1000, ...options },
    { ...process.env, HOME: s.dir, XDG_STATE_HOME: `${s.dir}/state` },
  );
  instances.push(h);
  await waitFor(() => h.sidecar.state === "ready", 10_000);
  return { h, s, logs: fc.logs };
}

/** SIGSTOP, then wait until every thread of the process is stopped (signal delivery is asynchronous). */
async function stop(pid) {
  process.kill(pid, "SIGSTOP");
  stopped.add(pid);
  if (!existsSync(`/proc/${pid}/task`)) return sleep(200); // not Linux: give it a moment
  const state = (tid) => {
    try {
      return readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").replace(/^.*\) /s, "")[0];
    } catch {
      return "T"; // the thread is gone
    }
  };
  await waitFor(() => readdirSync(`/proc/${pid}/task`).every((tid) => state(tid) === "T"), 5000, 5);
}

function cont(pid) {
  process.kill(pid, "SIGCONT");
  stopped.delete(pid);
}

const errorText = "[ERROR] Unknown agent: nonexistent. Available agents: explorer, oracle";

/** A tool.execute.after whose guidance only a live sidecar adds: resolves with the output text. */
async function guidance(h, callID) {
  const output = { title: "t", metadata: {}, output: errorText };
  await h.hooks["tool.execute.after"]({ tool: "task", sessionID: PARENT, callID, args: {} }, output);
  return { text: output.output };
}

test("kill -STOP: after 3 missed deadlines the sidecar is killed and restarted; new calls are answered within their deadline", async () => {
  const { h, s, logs } = await open();
  const victim = h.sidecar.pid;
  assert.match((await guidance(h, "c0")).text, /unknown_agent/, "alive before");
  await stop(victim);
  // Three hooks at once (OpenCode runs sessions side by side); each misses.
  const missed = await Promise.all([1, 2, 3].map((n) => guidance(h, `c${n}`)));
  for (const m of missed) assert.equal(m.text, errorText, "passed through unchanged");
  const timedOut = s.records().filter((r) => r.ev === "reply" && r.method === "tool.execute.after" && r.pid === victim && r.reason === "timeout");
  assert.equal(timedOut.length, 3, "each missed its deadline");
  await waitFor(() => !alive(victim), 5000);
  await waitFor(() => h.sidecar.state === "ready" && h.sidecar.pid !== victim, 5000);
  stopped.delete(victim);
  assert.ok(s.records().some((r) => r.ev === "hung" && r.pid === victim && r.misses === 3));
  assert.equal(logs.filter((l) => /hung: 3 calls in a row/.test(l.message)).length, 1);
  // Nothing of the old process waits: what is pending now is the new one's
  // (the trace's inspect after initialize), and it is answered.
  await waitFor(() => h.sidecar.pendingCalls === 0, 2000);
  // New calls: answered, each well within its deadline (1000 ms).
  for (let i = 0; i < 5; i++) {
    const r = await guidance(h, `n${i}`);
    assert.match(r.text, /unknown_agent/, "answered within its deadline");
  }
});

test("kill -STOP with 200 x 1 MB transforms: bytes in flight stay under the bound; after kill -CONT new calls are answered within their deadline", async () => {
  // Hang detection off, so the same stopped child takes the whole flood.
  // The call after SIGCONT waits behind the flood the child reads first: a 3 s deadline for it, so that a loaded machine does not fail it.
  const { h, s } = await open({ hungAfterMisses: 0, transformTimeoutMs: 2000, timeoutMs: 3000 });
  const pid = h.sidecar.pid;
  await stop(pid);
  const big = "x".repeat(1 << 20);
  const rssBefore = process.memoryUsage().rss;
  let peak = 0;
  const calls = [];
  for (let i = 0; i < 200; i++) {
    calls.push(h.hooks["experimental.chat.system.transform"]({ sessionID: PARENT, model: {} }, { system: [big] }));
    peak = Math.max(peak, h.sidecar.inFlightBytes);
    if (i % 20 === 19) await new Promise((r) => setImmediate(r)); // let the hooks run their sends
    peak = Math.max(peak, h.sidecar.inFlightBytes);
  }
  await Promise.all(calls);
  peak = Math.max(peak, h.sidecar.inFlightBytes);
  const rssGrowth = process.memoryUsage().rss - rssBefore;
  assert.ok(peak > 0, "the stopped child read nothing past the pipe");
  assert.ok(peak <= DEFAULT_MAX_IN_FLIGHT_BYTES, `peak in flight ${peak}`);
  assert.equal(h.sidecar.pendingCalls, 0, "timed-out calls left the pending map");
  const records = s.records().filter((r) => r.method === "chat.system.transform");
  const written = records.filter((r) => r.ev === "call").length;
  const replies = records.filter((r) => r.ev === "reply");
  const overloaded = replies.filter((r) => r.reason === "overloaded").length;
  const timedOut = replies.filter((r) => r.reason === "timeout").length;
  assert.ok(written >= 1 && written <= 8, `${written} written`);
  assert.equal(timedOut, written, "every call written to the stopped process timed out");
  assert.ok(overloaded >= 1 && overloaded + written <= 200, `${overloaded} refused unwritten`);
  assert.equal(h.sidecar.pid, pid, "not killed: detection is off");

  cont(pid);
  const t = performance.now();
  const r = await guidance(h, "after-cont");
  assert.match(r.text, /unknown_agent/, "the first call after SIGCONT is answered within its deadline");
  console.log(`# peak in flight ${peak} B, rss growth ${(rssGrowth / 1048576).toFixed(1)} MiB, ${written} written, ${overloaded} refused, first call after CONT ${(performance.now() - t).toFixed(0)} ms`);
});

test("a string cut in the middle of an emoji (a lone surrogate) is answered with the request's id", async () => {
  // Needs the sidecar to accept escaped lone surrogates (issue 9): with an
  // older one the reply has id null and the call waits out its deadline.
  const { h, s } = await open({ timeoutMs: 2000 });
  const cut = "ab😀".slice(0, 3);
  assert.equal(JSON.stringify(cut), '"ab\\ud83d"');
  const output = { title: "t", metadata: {}, output: `${errorText} ${cut}` };
  await h.hooks["tool.execute.after"]({ tool: "task", sessionID: PARENT, callID: "emoji", args: { description: cut } }, output);
  const reply = s.records().findLast((r) => r.ev === "reply" && r.method === "tool.execute.after");
  assert.equal(reply.ok, true, `answered within its deadline; reply: ${JSON.stringify(reply)}`);
  assert.match(output.output, /unknown_agent/, "guidance appended");
  // The sidecar reads the lone surrogate as U+FFFD (PROTOCOL.md 1), and its
  // patch replaces the whole output, so that is what OpenCode keeps.
  assert.ok(output.output.startsWith(`${errorText} ab\ufffd\n`), JSON.stringify(output.output.slice(0, 90)));
});
