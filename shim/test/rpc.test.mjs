import assert from "node:assert/strict";
import { PassThrough, Writable } from "node:stream";
import { test } from "node:test";
import { CancelledError, ClosedError, EncodeError, inPieces, LineConnection, OverloadedError, RpcError } from "../dist/rpc.js";

function pair() {
  const fromSidecar = new PassThrough();
  const toSidecar = new PassThrough();
  const sent = [];
  toSidecar.on("data", (d) => sent.push(...d.toString().split("\n").filter(Boolean).map((l) => JSON.parse(l))));
  return { conn: new LineConnection(fromSidecar, toSidecar), fromSidecar, sent };
}

test("one JSON value per line out; replies matched by id, split anywhere across reads", async () => {
  const { conn, fromSidecar, sent } = pair();
  const a = conn.request("status");
  const b = conn.request("tool.execute.before", { input: { text: "multi\nline" }, output: {} });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(sent[0], { jsonrpc: "2.0", id: 1, method: "status" });
  assert.equal(sent[1].params.input.text, "multi\nline");
  const replies = JSON.stringify({ jsonrpc: "2.0", id: 2, result: { patch: [] } }) + "\n" + JSON.stringify({ jsonrpc: "2.0", id: 1, result: { ok: "é" } }) + "\n";
  const bytes = Buffer.from(replies);
  for (let i = 0; i < bytes.length; i += 7) fromSidecar.write(bytes.subarray(i, i + 7)); // splits inside "é" too
  assert.deepEqual(await a, { ok: "é" });
  assert.deepEqual(await b, { patch: [] });
});

test("error replies reject with the code; junk lines and unknown ids are ignored", async () => {
  const { conn, fromSidecar } = pair();
  const a = conn.request("x");
  fromSidecar.write("not json\n\n" + JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse" } }) + "\n");
  fromSidecar.write(JSON.stringify({ jsonrpc: "2.0", id: 99, result: 1 }) + "\n");
  fromSidecar.write(JSON.stringify([{ jsonrpc: "2.0", id: 1, error: { code: -32602, message: "bad params: input" } }]) + "\n");
  await assert.rejects(a, (e) => e instanceof RpcError && e.code === -32602 && /input/.test(e.message));
});

test("close rejects the waiting calls and every later one; encode errors send nothing", async () => {
  const { conn, fromSidecar, sent } = pair();
  const cyclic = {};
  cyclic.self = cyclic;
  await assert.rejects(conn.request("x", cyclic), EncodeError);
  assert.equal(conn.notify("event", { n: 1n }), false);
  const waiting = conn.request("y");
  fromSidecar.end();
  await assert.rejects(waiting, ClosedError);
  await assert.rejects(conn.request("z"), ClosedError);
  assert.equal(conn.notify("event", {}), false);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(sent.map((m) => m.method), ["y"]);
});

test("an aborted call leaves the pending map; its late reply is dropped", async () => {
  const { conn, fromSidecar } = pair();
  const cancel = new AbortController();
  const a = conn.request("x", {}, { signal: cancel.signal });
  const b = conn.request("y");
  assert.equal(conn.pendingCount, 2);
  cancel.abort();
  await assert.rejects(a, CancelledError);
  assert.equal(conn.pendingCount, 1);
  fromSidecar.write(JSON.stringify({ jsonrpc: "2.0", id: 1, result: "late" }) + "\n" + JSON.stringify({ jsonrpc: "2.0", id: 2, result: "ok" }) + "\n");
  assert.equal(await b, "ok");
  assert.equal(conn.pendingCount, 0);
  const already = new AbortController();
  already.abort();
  await assert.rejects(conn.request("z", {}, { signal: already.signal }), CancelledError);
  assert.equal(conn.pendingCount, 0);
});

test("maxBufferedBytes: a message that would pass the bound is refused unwritten; the bound frees as the reader reads", async () => {
  const fromSidecar = new PassThrough();
  const held = [];
  // A reader that takes nothing until told (a stopped child).
  const toSidecar = new Writable({ highWaterMark: 1, write: (chunk, _e, cb) => held.push({ chunk, cb }) });
  const answers = [];
  const conn = new LineConnection(fromSidecar, toSidecar, { onAnswer: () => answers.push(1) });
  const big = "x".repeat(1000);
  const max = 2500;
  const calls = [];
  for (let i = 0; i < 5; i++) calls.push(conn.request("t", { big }, { maxBufferedBytes: max }).catch((e) => e));
  assert.ok(conn.bufferedBytes <= max, `${conn.bufferedBytes} buffered`);
  assert.equal(conn.bufferedBytes, 2 * Buffer.byteLength(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "t", params: { big } }) + "\n"));
  const refused = await Promise.all(calls.slice(2));
  for (const e of refused) assert.ok(e instanceof OverloadedError && /limit 2500/.test(e.message), String(e));
  assert.equal(conn.pendingCount, 2, "refused calls never entered the pending map");
  assert.equal(conn.notify("event", { big }, max), false);
  assert.equal(conn.notify("event", { small: 1 }), true, "no bound given: written");
  // The reader takes everything: room again.
  while (held.length) held.shift().cb();
  await new Promise((r) => setImmediate(r));
  assert.equal(conn.bufferedBytes, 0);
  void conn.request("t", { big }, { maxBufferedBytes: max }).catch(() => {});
  assert.ok(conn.bufferedBytes > 0);
  // Only a reply to a call made counts as life: junk and unknown ids do not.
  fromSidecar.write("junk\n" + JSON.stringify({ jsonrpc: "2.0", id: 77, result: 1 }) + "\n" + JSON.stringify({ jsonrpc: "2.0", id: 1, result: 1 }) + "\n");
  assert.equal(await calls[0], 1);
  assert.equal(answers.length, 1);
});

test("long lines go out as their UTF-8 bytes, each its own, while an earlier one still waits to be written", async () => {
  const fromSidecar = new PassThrough();
  const held = [];
  // A reader that takes nothing until told: every line waits in the writer.
  const toSidecar = new Writable({ highWaterMark: 1, write: (chunk, _e, cb) => held.push({ chunk, cb }) });
  const conn = new LineConnection(fromSidecar, toSidecar);
  const texts = ["é → ✓ \ud83d\ude00 ".repeat(3000), "plain ascii ".repeat(5000), "x".repeat(10), "ü\n\"".repeat(20000)];
  const line = (id, text) => JSON.stringify(id ? { jsonrpc: "2.0", id, method: "t", params: { text } } : { jsonrpc: "2.0", method: "n", params: { text } }) + "\n";
  // What each write carried, read once every line of the round was made.
  const drain = async () => {
    const sent = [];
    while (held.length) {
      const { chunk, cb } = held.shift();
      sent.push(Buffer.from(chunk).toString());
      cb();
      await new Promise((r) => setImmediate(r));
    }
    return sent;
  };
  void conn.request("t", { text: texts[0] }, { maxBufferedBytes: 1 << 30 }).catch(() => {});
  void conn.request("t", { text: texts[1] }, { maxBufferedBytes: 1 << 30 }).catch(() => {});
  assert.equal(conn.notify("n", { text: texts[3] }), true);
  assert.equal(conn.bufferedBytes, Buffer.byteLength(line(1, texts[0]) + line(2, texts[1]) + line(0, texts[3])), "counted in bytes");
  assert.deepEqual(await drain(), [line(1, texts[0]), line(2, texts[1]), line(0, texts[3])]);
  // All written: the next long line may take the buffer the first had.
  void conn.request("t", { text: texts[3] }).catch(() => {});
  void conn.request("t", { text: texts[2] }).catch(() => {});
  void conn.request("t", { text: texts[0] }).catch(() => {});
  assert.deepEqual(await drain(), [line(3, texts[3]), line(4, texts[2]), line(5, texts[0])]);
});

test("params marked inPieces go out as the line JSON.stringify makes of them, long or short", async () => {
  const sent = [];
  const conn = new LineConnection(new PassThrough(), new Writable({ write: (chunk, _e, cb) => (sent.push(Buffer.from(chunk).toString()), cb()) }));
  const texts = ["é → ✓ \ud83d\ude00 \"q\"\n", "plain ascii ", "\u2028\u0000\\"];
  const message = (i, n) => ({ info: { id: `m${i}`, role: i % 2 ? "assistant" : "user" }, parts: [{ type: "text", text: texts[i % 3].repeat(n) }, { type: "tool", synthetic: false }] });
  const cases = {
    "long, groups of every size": (() => {
      const msgs = Array.from({ length: 60 }, (_, i) => message(i, i % 7 === 0 ? 9000 : 40));
      return { params: { input: { sessionID: "s", deep: [1, { x: null }] }, output: { messages: msgs }, sync: { session: "s" } }, marked: (p) => [p, p.output, p.output.messages] };
    })(),
    "short": { params: { input: {}, output: { messages: [message(0, 1)] } }, marked: (p) => [p, p.output, p.output.messages] },
    "empty array": { params: { input: {}, output: { messages: [] } }, marked: (p) => [p, p.output, p.output.messages] },
    "members left out or given their name": {
      params: { a: undefined, f: () => 1, input: { toJSON: (key) => `input was ${key}` }, output: { messages: [message(1, 3000), message(2, 3000)] }, z: 1 },
      marked: (p) => [p, p.output, p.output.messages],
    },
    "nothing between the root and the array marked": { params: { output: { messages: [message(0, 3000)] } }, marked: (p) => [p, p.output.messages] },
    "only the root marked": { params: { input: 1, output: { messages: [message(0, 3000)] } }, marked: (p) => [p] },
  };
  let id = 0;
  for (const [name, { params, marked }] of Object.entries(cases)) {
    inPieces(...marked(params));
    void conn.request("chat.messages.transform", params).catch(() => {});
    id++;
    await new Promise((r) => setImmediate(r));
    assert.equal(sent.at(-1), JSON.stringify({ jsonrpc: "2.0", id, method: "chat.messages.transform", params }) + "\n", name);
  }
});

test("a notification from the sidecar (a method, no id) goes to onNotification and answers no call", async () => {
  const fromSidecar = new PassThrough();
  const got = [];
  const answers = [];
  const conn = new LineConnection(fromSidecar, new PassThrough(), {
    onNotification: (method, params) => got.push([method, params]),
    onAnswer: () => answers.push(1),
  });
  const a = conn.request("status");
  fromSidecar.write(JSON.stringify({ jsonrpc: "2.0", method: "cache.bust", params: { session: "ses_a" } }) + "\n");
  fromSidecar.write(JSON.stringify([{ jsonrpc: "2.0", method: "other" }]) + "\n");
  fromSidecar.write(JSON.stringify({ jsonrpc: "2.0", id: 1, result: 7 }) + "\n");
  assert.equal(await a, 7);
  assert.deepEqual(got, [["cache.bust", { session: "ses_a" }], ["other", undefined]]);
  assert.equal(answers.length, 1);
  const throwing = new LineConnection(fromSidecar, new PassThrough(), { onNotification: () => { throw new Error("observer broke"); } });
  const b = throwing.request("status");
  fromSidecar.write(JSON.stringify({ jsonrpc: "2.0", method: "cache.bust" }) + "\n" + JSON.stringify({ jsonrpc: "2.0", id: 1, result: 8 }) + "\n");
  assert.equal(await b, 8, "a throwing observer does not stop reading");
});
