#!/usr/bin/env node
// Reproduces a cache-stable finding of scripts/CACHE_RESULTS.md: past
// sessions.MaxFrozenBlocksPerSession (256) orchestrator user messages in one
// session, the frozen sessions blocks of earlier messages change.
//
//   node scripts/cache-breaks-frozen-bound.mjs BIN/hookwire [TURNS=300]
//
// Drives the sidecar directly (line-framed JSON-RPC, cacheStable on): per
// turn, one new orchestrator user message, a chat.messages.transform of the
// whole history, then one delegation with a new label (so the block changes
// every turn). Reports the requests in which an earlier message got a block
// other than the one it first got. Exits 1 if any did. Not part of `make test`
// while the finding stands.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const [bin, turnsArg] = process.argv.slice(2);
if (!bin) {
  console.error("usage: cache-breaks-frozen-bound.mjs HOOKWIRE_BIN [TURNS]");
  process.exit(2);
}
const turns = Number(turnsArg ?? 300);
const child = spawn(bin, [], { stdio: ["pipe", "pipe", "ignore"] });
const waiting = new Map();
createInterface({ input: child.stdout }).on("line", (l) => {
  const m = JSON.parse(l);
  waiting.get(m.id)?.(m);
  waiting.delete(m.id);
});
let id = 0;
const call = (method, params) =>
  new Promise((res) => {
    const i = ++id;
    waiting.set(i, res);
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: i, method, params }) + "\n");
  });

const S = "ses_parent";
const init = await call("initialize", { protocolVersion: 1, config: { cacheStable: true } });
if (init.error) throw new Error(JSON.stringify(init.error));
await call("chat.message", { input: { sessionID: S, agent: "orchestrator" }, output: { message: {}, parts: [] } });

const msgs = [];
const firstBlock = new Map(); // message index -> the block it first got
let badRequests = 0;
let first = 0;
for (let t = 1; t <= turns; t++) {
  msgs.push({ info: { id: `msg_${String(t).padStart(5, "0")}`, role: "user", agent: "orchestrator", sessionID: S }, parts: [{ type: "text", text: `turn ${t}` }] });
  const r = await call("chat.messages.transform", { input: {}, output: { messages: msgs } });
  const blocks = new Map();
  for (const op of r.result.patch) if (op.value?.text?.includes("### Resumable Sessions")) blocks.set(Number(op.path.split("/")[2]), op.value.text);
  let changed = 0;
  for (const [i, text] of firstBlock) if (blocks.get(i) !== text) changed++;
  for (const [i, text] of blocks) if (!firstBlock.has(i)) firstBlock.set(i, text);
  if (changed) {
    badRequests++;
    first ||= t;
    if (badRequests <= 3) console.log(`user message ${t}: ${changed} earlier messages got a different block`);
  }
  const args = { description: `task ${t}`, prompt: "p", subagent_type: "explorer", ...(t > 1 ? { task_id: "exp-1" } : {}) };
  await call("tool.execute.before", { input: { tool: "task", sessionID: S, callID: `c${t}` }, output: { args: { ...args } } });
  await call("tool.execute.after", {
    input: { tool: "task", sessionID: S, callID: `c${t}`, args },
    output: { title: "", output: `<task id="ses_child1" state="completed">\nok\n</task>`, metadata: {} },
  });
}
child.stdin.end();
console.log(`${turns} user messages: ${badRequests} requests changed an earlier block${first ? ` (from user message ${first})` : ""}`);
process.exit(badRequests ? 1 : 0);
