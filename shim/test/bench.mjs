#!/usr/bin/env node
// Cost of one small hook call through the shim, against the real sidecar.
//
//   node test/bench.mjs [rounds=30] [callsPerRound=200]
//   taskset -c 1 node test/bench.mjs      # one CPU, see scripts/bench/RESULTS.md
//
// Three clients, each with its own sidecar process, take turns round by round
// (A B C A B C ...), each call awaited before the next as OpenCode does:
//   line   a bare line-framed JSON-RPC client (the floor: JSON + pipe + sidecar)
//   vscode a vscode-jsonrpc connection with header framing (the alternative
//          transport the shim measured and did not take; devDependency only)
//   shim   the shim's tool.execute.before hook (line framing, deadline,
//          checks, patch apply)
// Reports the median over rounds of each round's median call time, and the
// median of per-round ratios.
import { spawn } from "node:child_process";
import * as rpc from "vscode-jsonrpc/node";
import { createHookwire } from "../dist/plugin.js";
import { lineClient, realSidecar } from "./helpers.mjs";

const rounds = Number(process.argv[2] ?? 30);
const perRound = Number(process.argv[3] ?? 200);
const bin = realSidecar();

const input = { tool: "task", sessionID: "ses_bench00000000000000000001", callID: "call_1" };
const makeOutput = () => ({ args: { description: "Explore the repo", prompt: "List the files in the repo.", subagent_type: "explorer" } });
const initParams = { protocolVersion: 1, clientInfo: { name: "bench", version: "0" }, config: {} };

async function bareClient() {
  const { call, stop } = lineClient(bin);
  await call("initialize", initParams);
  return { call: () => call("tool.execute.before", { input, output: makeOutput() }), stop };
}

async function vscodeClient() {
  const child = spawn(bin, [], { stdio: ["pipe", "pipe", "ignore"] });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  conn.listen();
  await conn.sendRequest("initialize", initParams);
  return { call: () => conn.sendRequest("tool.execute.before", { input, output: makeOutput() }), stop: () => (conn.dispose(), child.kill()) };
}

async function shimClient() {
  const h = createHookwire({}, { binary: bin, logFile: null, subagents: [], timeoutMs: 5000 }, process.env);
  const ok = await h.sidecar.whenReady(10_000);
  if (!ok) throw new Error("sidecar not ready");
  const hook = h.hooks["tool.execute.before"];
  return { call: () => hook(input, makeOutput()), stop: () => h.dispose() };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function roundOf(client) {
  const times = [];
  for (let i = 0; i < perRound; i++) {
    const t = process.hrtime.bigint();
    await client.call();
    times.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  return median(times);
}

const clients = { line: await bareClient(), vscode: await vscodeClient(), shim: await shimClient() };
for (const c of Object.values(clients)) await roundOf(c); // warm-up
const per = { line: [], vscode: [], shim: [] };
for (let r = 0; r < rounds; r++) for (const [name, c] of Object.entries(clients)) per[name].push(await roundOf(c));
const ratio = (a, b) => median(per[a].map((x, i) => x / per[b][i]));
console.log(`small tool.execute.before round trip, ${rounds} rounds x ${perRound} calls, median of round medians:`);
for (const name of Object.keys(per)) console.log(`  ${name.padEnd(6)} ${median(per[name]).toFixed(1)} µs`);
console.log(`  shim - line: ${(median(per.shim) - median(per.line)).toFixed(1)} µs; shim/line ${ratio("shim", "line").toFixed(2)}x; vscode/line ${ratio("vscode", "line").toFixed(2)}x; shim/vscode ${ratio("shim", "vscode").toFixed(2)}x`);
for (const c of Object.values(clients)) await c.stop();
process.exit(0);
