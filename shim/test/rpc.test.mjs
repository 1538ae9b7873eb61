import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { ClosedError, EncodeError, LineConnection, RpcError } from "../dist/rpc.js";

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
