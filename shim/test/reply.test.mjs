// Replies a buggy or hostile sidecar writes (issue 23): a reply line with no
// end, or too long to hold, must not take OpenCode's process down, and
// replies addressed to ids nobody asked must not keep a hung sidecar alive.
// The Sidecar verdicts run on a mocked clock, as in deadline.test.mjs.
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, mock, test } from "node:test";
import { Logger } from "../dist/log.js";
import { LineConnection, OversizedError, topLevelId } from "../dist/rpc.js";
import { Sidecar } from "../dist/sidecar.js";
import { DEFAULT_MAX_REPLY_BYTES, resolveSettings } from "../dist/options.js";
import { fakeClient, fakeSpawner, flushIO, healthyAnswer } from "./helpers.mjs";

beforeEach(() => mock.timers.enable({ apis: ["setTimeout", "setImmediate", "Date"], now: 0 }));
afterEach(() => mock.timers.reset());

async function advance(ms) {
  mock.timers.tick(ms);
  for (let i = 0; i < 5; i++) {
    await flushIO();
    mock.timers.tick(0);
  }
}

function track(p) {
  const t = { value: "pending" };
  p.then(
    (v) => (t.value = v),
    (e) => (t.value = e),
  );
  return t;
}

function pair(opts) {
  const fromSidecar = new PassThrough();
  const toSidecar = new PassThrough();
  toSidecar.resume();
  return { conn: new LineConnection(fromSidecar, toSidecar, opts), fromSidecar };
}

const line = (obj) => JSON.stringify({ jsonrpc: "2.0", ...obj }) + "\n";

test("topLevelId: the id of a message from its first bytes, only at the top level", () => {
  const cases = [
    ['{"jsonrpc":"2.0","id":7,"result":{"pad":"xxx', 7],
    ['{ "id" : 12 , "result": 1}', 12],
    ['{"result":{"id":5,"x":"', undefined], // nested: not the message's id
    ['{"jsonrpc":"2.0","result":["id",{"id":3}],"id":4}', 4],
    ['{"method":"id","id":9}', 9], // "id" as a value is no member name
    ['{"note":"a \\" \\"id\\":8","id":2}', 2], // escaped quotes inside a string
    ['{"jsonrpc":"2.0","id":"s1","result":', undefined], // not ours: the shim's ids are numbers
    ['{"jsonrpc":"2.0","id":12', undefined], // cut inside the number
    ['{"jsonrpc":"2.0","pad":"xxxxxxxx', undefined],
    ["", undefined],
  ];
  for (const [head, want] of cases) assert.equal(topLevelId(head), want, head);
});

test("a line over maxLineBytes: its call fails at once, before the line ends; the line is never held; the next line is read", async () => {
  const oversized = [];
  const { conn, fromSidecar } = pair({ maxLineBytes: 1000, onOversized: (id) => oversized.push(id) });
  const a = track(conn.request("tool.execute.before", {}));
  const b = track(conn.request("status"));
  await flushIO();
  fromSidecar.write('{"jsonrpc":"2.0","id":1,"result":{"pad":"');
  const pad = Buffer.alloc(300, "x");
  for (let i = 0; i < 3; i++) fromSidecar.write(pad);
  await flushIO();
  assert.equal(a.value, "pending", "900 bytes: under the limit so far");
  fromSidecar.write(pad);
  await flushIO();
  assert.ok(a.value instanceof OversizedError, `got ${a.value}`);
  assert.deepEqual(oversized, [1]);
  assert.equal(conn.pendingCount, 1);
  // The rest of the line (1 MB more) is dropped as it comes; nothing of it
  // is parsed, not even the id-1 reply embedded in it.
  for (let i = 0; i < 1000; i++) fromSidecar.write(Buffer.alloc(1000, "y"));
  fromSidecar.write('"}}' + "\n" + line({ id: 2, result: { ok: true } }));
  await flushIO();
  assert.deepEqual(b.value, { ok: true });
  assert.deepEqual(oversized, [1], "one line, reported once");
});

test("a line of exactly maxLineBytes is read; an oversized line whose id answers nothing fails no call", async () => {
  const oversized = [];
  const { conn, fromSidecar } = pair({ maxLineBytes: 64, onOversized: (id) => oversized.push(id) });
  const a = track(conn.request("x"));
  await flushIO();
  const exact = JSON.stringify({ jsonrpc: "2.0", id: 1, result: "y".repeat(64 - 36) });
  assert.equal(exact.length, 64);
  fromSidecar.write(line({ id: 99, result: "z".repeat(100) }) + exact + "\n");
  await flushIO();
  assert.equal(a.value, "y".repeat(28));
  assert.deepEqual(oversized, [99]);
});

test("an endless line: memory held stays under the limit, whatever the sidecar writes", async () => {
  const { conn, fromSidecar } = pair({ maxLineBytes: 1 << 20 });
  const a = track(conn.request("x"));
  await flushIO();
  fromSidecar.write('{"jsonrpc":"2.0","id":1,"result":"');
  const chunk = Buffer.alloc(1 << 16, "x");
  // 64 MiB with no newline: the connection drops it as it streams.
  for (let i = 0; i < 1024; i++) {
    fromSidecar.write(chunk);
    if (i % 64 === 63) await flushIO();
  }
  await flushIO();
  assert.ok(a.value instanceof OversizedError);
  // What the connection holds of the line: nothing past the limit.
  assert.equal(conn.partialBytes, 0);
  assert.equal(conn.partial.length, 0);
});

// ---- Through Sidecar: the call's result and the hung rule ---------------

function start(spawner, opts = {}) {
  const fc = fakeClient();
  const s = new Sidecar({
    binary: "hookwire",
    args: [],
    initParams: async () => ({ protocolVersion: 1, clientInfo: { name: "test", version: "0" }, config: {} }),
    log: new Logger(fc.client),
    spawn: spawner.spawn,
    ...opts,
  });
  s.start();
  return { s, logs: fc.logs };
}

test("an oversized reply: the call fails at once (oversized), logged once; three in a row and the child is killed as hung", async () => {
  const spawner = fakeSpawner((msg, child) => {
    if (msg.method !== "tool.execute.before") return healthyAnswer(msg);
    child.stdout.write(line({ id: msg.id, result: { patch: [], pad: "x".repeat(2000) } }));
    return undefined;
  });
  const { s, logs } = start(spawner, { maxReplyBytes: 1000 });
  await advance(0);
  const first = spawner.children[0];
  for (let n = 1; n <= 2; n++) {
    const c = track(s.request("tool.execute.before", { n }, 250));
    await advance(0);
    assert.equal(c.value.reason, "oversized", `call ${n} fails without waiting its deadline`);
    assert.match(c.value.detail, /over the 1000 bytes allowed/);
  }
  assert.deepEqual(first.signals, []);
  const third = track(s.request("tool.execute.before", { n: 3 }, 250));
  await advance(0);
  assert.equal(third.value.reason, "oversized");
  assert.deepEqual(first.signals, ["SIGKILL"], "three calls in a row without a usable reply");
  assert.equal(logs.filter((l) => l.message.includes("over maxReplyBytes")).length, 1);
});

test("replies to ids nobody asked do not reset the hung count: three missed deadlines and the child is killed", async () => {
  const spawner = fakeSpawner((msg, child) => {
    if (msg.method !== "tool.execute.before") return healthyAnswer(msg);
    child.reply({ id: msg.id + 1000, result: { patch: [] } }); // a wrong id, at once
    return undefined;
  });
  const { s } = start(spawner);
  await advance(0);
  const child = spawner.children[0];
  for (let n = 1; n <= 3; n++) {
    const c = track(s.request("tool.execute.before", { n }, 250));
    await advance(250);
    assert.equal(c.value.reason, "timeout");
    if (n < 3) assert.deepEqual(child.signals, [], `after miss ${n}`);
  }
  assert.deepEqual(child.signals, ["SIGKILL"]);
});

test("a reply repeated for a call already answered does not reset the hung count", async () => {
  const answered = [];
  const spawner = fakeSpawner((msg, child) => {
    if (msg.method === "status") {
      answered.push(msg.id);
      return healthyAnswer(msg);
    }
    if (msg.method !== "tool.execute.before") return healthyAnswer(msg);
    for (const id of answered) child.reply({ id, result: {} }); // replays of old answers
    return undefined;
  });
  const { s } = start(spawner);
  await advance(0);
  const st = track(s.request("status", {}, 250));
  await advance(0);
  assert.deepEqual(st.value, { ok: true, result: {} });
  for (let n = 1; n <= 3; n++) {
    track(s.request("tool.execute.before", { n }, 250));
    await advance(250);
  }
  assert.deepEqual(spawner.children[0].signals, ["SIGKILL"]);
});

test("maxReplyBytes: a plugin option, 16 MiB by default; a bad value keeps the default with a warning", () => {
  assert.equal(DEFAULT_MAX_REPLY_BYTES, 16 * 1024 * 1024);
  assert.equal(resolveSettings({}, {}, {}).maxReplyBytes, DEFAULT_MAX_REPLY_BYTES);
  assert.equal(resolveSettings({ maxReplyBytes: 4096 }, {}, {}).maxReplyBytes, 4096);
  const bad = resolveSettings({ maxReplyBytes: "16MB" }, {}, {});
  assert.equal(bad.maxReplyBytes, DEFAULT_MAX_REPLY_BYTES);
  assert.deepEqual(bad.warnings, [`maxReplyBytes must be a number of bytes above 0, got "16MB"; using the default ${DEFAULT_MAX_REPLY_BYTES}`]);
  assert.equal(bad.config.maxReplyBytes, undefined, "a shim option, never sent to the sidecar");
});
