#!/usr/bin/env node
// The checks of the end-to-end test (scripts/e2e-opencode.sh), read from its
// scratch directory: requests.jsonl (every request body the fake LLM got),
// fakellm-events.jsonl (when it killed the sidecar), trace-run.jsonl and
// trace-delete.jsonl (the shim's trace: calls, replies, sidecar pids,
// status/sessions.list after each session.deleted), run.jsonl / run.rc; and
// the same files of the stock-agents runs under stock/ (checks S0-S5).
// Prints PASS/FAIL per check and exits non-zero when any fails.
// --stock-only: only the stock checks S0-S5 (scripts/e2e-registry.sh, whose
// WORKDIR/stock holds a stock setup that loaded the plugin by its npm name).

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { textOf, taskIdOf } from "./fakellm/common.mjs";
import { check as record, finalTextOf, finish, readJsonl as readJsonlFile, readText as readTextFile } from "./lib/checks.mjs";

const work = process.argv[2];
const stockOnly = process.argv[3] === "--stock-only";
if (!work) {
  console.error("usage: e2e-opencode-assert.mjs WORKDIR [--stock-only]");
  process.exit(2);
}

// The hooks the shim answers with a patch: the contract's request hooks.
const contract = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "contract", "contract.json"), "utf8"));
const requestHooks = new Set(contract.methods.filter((m) => m.role === "hook" && m.kind === "request").map((m) => m.name));

const readText = (name) => readTextFile(join(work, name));
const readJsonl = (name) => readJsonlFile(join(work, name));

const requests = readJsonl("requests.jsonl");
const events = readJsonl("fakellm-events.jsonl");
const traceRun = readJsonl("trace-run.jsonl");
const traceDelete = readJsonl("trace-delete.jsonl");
const runRc = readText("run.rc").trim();
const runOut = readText("run.jsonl");
const parent = readText("parent").trim();

// --- helpers over OpenAI-style request bodies --------------------------------
const systemTexts = (body) => body.messages.filter((m) => m.role === "system").map((m) => textOf(m.content));
const lastUser = (body) => body.messages.filter((m) => m.role === "user").at(-1);
const toolResults = (body) => body.messages.filter((m) => m.role === "tool");
/** The task calls the orchestrator made in this request's history, with their results. */
const taskCalls = (body) => {
  const results = new Map(toolResults(body).map((m) => [m.tool_call_id, textOf(m.content)]));
  return body.messages
    .filter((m) => m.role === "assistant" && Array.isArray(m.tool_calls))
    .flatMap((m) => m.tool_calls)
    .filter((tc) => tc.function?.name === "task")
    .map((tc) => {
      let args = {};
      try {
        args = JSON.parse(tc.function.arguments);
      } catch {}
      return { id: tc.id, args, result: results.get(tc.id) };
    });
};

const orchestrator = requests.filter((r) => r.agent === "orchestrator");
const subagents = requests.filter((r) => r.agent === "explorer" || r.agent === "oracle");
const replies = new Map(readJsonl("requests.replies.jsonl").map((r) => [r.n, r.answer]));

// --- the checks -----------------------------------------------------------------
function check(name, fn) {
  if (stockOnly && !name.startsWith("S")) return;
  let outcome;
  try {
    outcome = fn();
  } catch (err) {
    outcome = { ok: false, why: `threw: ${err?.stack ?? err}` };
  }
  record(name, outcome.ok, outcome.why);
}

check("0. the run completed (opencode exit 0, final orchestrator text)", () => {
  if (runRc !== "0") return { ok: false, why: `opencode run exited ${runRc || "?"}; see run.err` };
  if (!runOut.includes("ORCHESTRATOR_DONE")) return { ok: false, why: "the final orchestrator text is missing from the run output" };
  return { ok: true, why: `${requests.length} LLM requests, ${orchestrator.length} from the orchestrator` };
});

check("1. (cacheStable false) after delegating to explorer, the orchestrator's system messages list exp-1 under ### Resumable Sessions", () => {
  // The first orchestrator request that already has the explorer's result.
  const after = orchestrator.find((r) => taskCalls(r.body).some((c) => c.args.subagent_type === "explorer" && c.result));
  if (!after) return { ok: false, why: "no orchestrator request after the explorer delegation" };
  const block = systemTexts(after.body).find((s) => s.includes("### Resumable Sessions"));
  if (!block) return { ok: false, why: `request #${after.n} has no ### Resumable Sessions system message` };
  if (!/- explorer: .*\bexp-1\b/.test(block)) return { ok: false, why: `request #${after.n}: block lacks "explorer: ... exp-1": ${JSON.stringify(block)}` };
  return { ok: true, why: `request #${after.n}: ${JSON.stringify(block.split("\n").filter((l) => l.startsWith("- ")))}` };
});

check('2. task with task_id "exp-1" resumes the same child session', () => {
  const final = orchestrator.at(-1);
  if (!final) return { ok: false, why: "no orchestrator request" };
  const calls = taskCalls(final.body);
  const first = calls.find((c) => c.args.subagent_type === "explorer");
  const resumeIndex = orchestrator.findIndex((r) => replies.get(r.n)?.toolCalls?.some((tc) => tc.args?.task_id === "exp-1"));
  if (resumeIndex < 0) return { ok: false, why: 'the scripted LLM never called task with task_id "exp-1"' };
  const resumeCallId = replies.get(orchestrator[resumeIndex].n).toolCalls.find((tc) => tc.args?.task_id === "exp-1").id;
  const resumed = calls.find((c) => c.id === resumeCallId);
  if (!first?.result || !resumed?.result) return { ok: false, why: "missing task results in the orchestrator history" };
  const a = taskIdOf(first.result);
  const b = taskIdOf(resumed.result);
  if (!a || a !== b) return { ok: false, why: `first explorer task ${a}, resumed call got ${b ?? JSON.stringify(resumed.result.slice(0, 200))}` };
  // The resumed child saw its earlier conversation.
  const explorerResumed = subagents.find((r) => r.agent === "explorer" && r.body.messages.some((m) => m.role === "user" && textOf(m.content).includes("Check again.")));
  const sawHistory = explorerResumed?.body.messages.some((m) => textOf(m.content).includes("List the files in the repo."));
  if (!sawHistory) return { ok: false, why: "the resumed explorer request does not carry the first task's conversation" };
  return { ok: true, why: `both calls answered by <task id="${a}">; the child's request carried its earlier turn` };
});

check("3. (cacheStable false) the orchestrator's latest user message carries the <internal_reminder> part; subagents' do not", () => {
  if (orchestrator.length === 0) return { ok: false, why: "no orchestrator request" };
  for (const r of orchestrator) {
    const user = lastUser(r.body);
    const parts = Array.isArray(user?.content) ? user.content : [{ type: "text", text: textOf(user?.content) }];
    const reminderAt = parts.findIndex((p) => typeof p.text === "string" && p.text.includes("<internal_reminder>"));
    if (reminderAt < 0) return { ok: false, why: `orchestrator request #${r.n}: no <internal_reminder> in its latest user message` };
    if (reminderAt === 0 || parts[0].text.includes("<internal_reminder>"))
      return { ok: false, why: `orchestrator request #${r.n}: the reminder is not a separate part after the user's text` };
  }
  for (const r of subagents) {
    if (r.body.messages.some((m) => textOf(m.content).includes("<internal_reminder>")))
      return { ok: false, why: `${r.agent} request #${r.n} carries the reminder` };
  }
  if (subagents.length === 0) return { ok: false, why: "no subagent requests" };
  return { ok: true, why: `${orchestrator.length} orchestrator requests with it, ${subagents.length} subagent requests without` };
});

check("4. task with an unknown subagent_type comes back with OpenCode's error followed by hookwire's guidance", () => {
  const final = orchestrator.at(-1);
  const bad = final && taskCalls(final.body).find((c) => c.args.subagent_type === "nonexistent");
  if (!bad?.result) return { ok: false, why: "no result for the nonexistent-agent call in the orchestrator history" };
  const err = "Unknown agent type: nonexistent is not a valid agent type";
  const at = bad.result.indexOf(err);
  if (at < 0) return { ok: false, why: `OpenCode's error text missing: ${JSON.stringify(bad.result.slice(0, 300))}` };
  const guidance = bad.result.slice(at + err.length);
  if (!guidance.includes("unknown_agent")) return { ok: false, why: `no guidance after the error: ${JSON.stringify(bad.result.slice(0, 400))}` };
  if (!/subagent_type="?[a-z]/.test(guidance)) return { ok: false, why: `guidance has no example call: ${JSON.stringify(guidance)}` };
  const available = guidance.match(/Available: (.*)/)?.[1];
  return { ok: true, why: `guidance follows the error${available ? ` (available: ${available})` : " (no available list)"}` };
});

check("5. killing the sidecar mid-run does not fail the run; the next hook call is served by the restarted sidecar", () => {
  const killed = events.find((e) => e.ev === "killed");
  if (!killed) return { ok: false, why: `the fake LLM did not kill the sidecar: ${JSON.stringify(events)}` };
  if (runRc !== "0") return { ok: false, why: `opencode run exited ${runRc}` };
  const exit = traceRun.find((r) => r.ev === "exit" && r.pid === killed.pid);
  if (!exit) return { ok: false, why: `the shim never saw sidecar ${killed.pid} exit` };
  const respawn = traceRun.find((r) => r.ev === "spawn" && r.t >= exit.t);
  if (!respawn) return { ok: false, why: "the shim did not restart the sidecar" };
  const nextCall = traceRun.find((r) => r.ev === "call" && requestHooks.has(r.method) && r.t >= killed.t);
  if (!nextCall) return { ok: false, why: "no hook call after the kill" };
  const reply = traceRun.find((r) => r.ev === "reply" && r.pid === nextCall.pid && r.method === nextCall.method && r.t >= nextCall.t);
  if (!reply?.ok) return { ok: false, why: `the next hook call (${nextCall.method}) was not served: ${JSON.stringify(reply)}` };
  if (nextCall.pid === killed.pid) return { ok: false, why: "the next hook call went to the killed sidecar" };
  const later = orchestrator.filter((r) => r.t > killed.t);
  return {
    ok: true,
    why: `sidecar ${killed.pid} killed, ${respawn.pid} started ${respawn.t - exit.t} ms after its exit; next hook ${nextCall.method} served in ${reply.ms} ms; ${later.length} orchestrator request(s) after the kill`,
  };
});

check("6. opencode session delete <parent> leaves no remembered entries in the sidecar", () => {
  if (!parent) return { ok: false, why: "no parent session id from the run" };
  if (readText("delete.rc").trim() !== "0") return { ok: false, why: `opencode session delete exited ${readText("delete.rc").trim() || "?"}` };
  const entriesOf = (reply) => {
    const r = reply?.ok ? reply.result : undefined;
    return Array.isArray(r) ? r : Array.isArray(r?.sessions) ? r.sessions : Array.isArray(r?.entries) ? r.entries : undefined;
  };
  const parentOf = (e) => e.parent ?? e.parentID ?? e.parentSessionID ?? e.sessionID;
  // What the sidecar of the delete process loaded from the state file first.
  const before = traceDelete.find((r) => r.ev === "inspect" && r.after === "initialize");
  const beforeEntries = entriesOf(before?.sessions)?.filter((e) => parentOf(e) === parent) ?? [];
  const deletedId = (r) => r.event?.properties?.info?.id ?? r.event?.properties?.sessionID;
  const after = traceDelete.filter((r) => r.ev === "inspect" && r.after === "session.deleted");
  const afterParent = after.find((r) => deletedId(r) === parent);
  if (!afterParent) return { ok: false, why: `no session.deleted for ${parent} reached the sidecar (${after.length} other deletions)` };
  const left = entriesOf(afterParent.sessions);
  if (!left) return { ok: false, why: `sessions.list failed: ${JSON.stringify(afterParent.sessions)}` };
  const mine = left.filter((e) => parentOf(e) === parent);
  if (mine.length > 0) return { ok: false, why: `${mine.length} entries left: ${JSON.stringify(mine)}` };
  if (beforeEntries.length === 0) return { ok: false, why: "nothing was remembered for the parent before the delete (state file not loaded?), so the check proves nothing" };
  // Both OpenCode processes ran in the same project: the shim's default,
  // --project <OpenCode's worktree>, gave both sidecars the same file, the
  // one earlier shims computed themselves (an upgrading user keeps it).
  const projectArg = (trace) => {
    const args = trace.find((r) => r.ev === "spawn")?.args ?? [];
    const i = args.indexOf("--project");
    return i >= 0 ? args[i + 1] : undefined;
  };
  const runProject = projectArg(traceRun);
  if (!runProject || runProject !== projectArg(traceDelete))
    return { ok: false, why: `the two sidecars got different projects: ${runProject} and ${projectArg(traceDelete)}` };
  const stateFile = before?.status?.result?.stateFile;
  const earlierRule = join(work, "xdg", "state", "hookwire", `${basename(runProject)}-${createHash("sha256").update(runProject).digest("hex").slice(0, 16)}.db`);
  if (stateFile?.mode !== "persistent" || stateFile.path !== earlierRule)
    return { ok: false, why: `state file ${JSON.stringify(stateFile)} is not the default per-project one, ${earlierRule}` };
  return { ok: true, why: `${beforeEntries.length} entries before (from the default state file ${basename(stateFile.path)} of --project ${basename(runProject)}), ${left.length} entries of any parent after` };
});

// --- Stock OpenCode: build, plan, explore, general; no agents of ours ------------
const stockDir = join(work, "stock");
const stockRequests = readJsonlFile(join(stockDir, "requests.jsonl"));
const stockReplies = new Map(readJsonlFile(join(stockDir, "requests.replies.jsonl")).map((r) => [r.n, r.answer]));
const stockTraces = [1, 2].map((n) => readJsonlFile(join(stockDir, `trace-run${n}.jsonl`)));
const build = stockRequests.filter((r) => r.agent === "build");
const runOf = (r) => (textOf(lastUser(r.body)?.content).includes("STOCK_RUN2") ? 2 : 1);
/** The task call the scripted build made with these args, and its result in build's latest history. */
const buildTask = (match) => {
  const final = build.at(-1);
  const callId = build.map((r) => stockReplies.get(r.n)?.toolCalls?.find((tc) => tc.name === "task" && match(tc.args))?.id).find(Boolean);
  return callId && final ? taskCalls(final.body).find((c) => c.id === callId) : undefined;
};

check("S0. stock: both runs of build completed (the second continues the first's session)", () => {
  const notes = [];
  for (const n of [1, 2]) {
    const rc = readTextFile(join(stockDir, `run${n}.rc`)).trim();
    if (rc !== "0") return { ok: false, why: `run ${n} exited ${rc || "?"}; see stock/run${n}.err` };
    const final = finalTextOf(stockDir, n, `BUILD_RUN${n}_DONE`);
    if (!final.ok) return { ok: false, why: `run ${n}'s final text is missing` };
    if (final.why && !notes.includes(final.why)) notes.push(final.why);
  }
  const agents = [...new Set(stockRequests.map((r) => r.agent))].sort();
  if (agents.includes("unknown")) return { ok: false, why: `a request of no known agent: ${agents}` };
  return { ok: true, why: `${stockRequests.length} LLM requests (${agents.join(", ")}), ${build.length} from build${notes.length ? `; ${notes.join("; ")}` : ""}` };
});

check("S1. stock: the shim told the sidecar OpenCode's agents (primary build, plan; subagents explore, general)", () => {
  const init = stockTraces[0].find((r) => r.ev === "call" && r.method === "initialize");
  if (!init) return { ok: false, why: "no initialize in run 1's trace" };
  const update = stockTraces[0].find((r) => r.ev === "notify" && r.method === "agents.update");
  const lists = { ...init.params.config, ...update?.params };
  const has = (list, names) => Array.isArray(list) && names.every((n) => list.includes(n));
  if (!has(lists.primaryAgents, ["build", "plan"]) || !has(lists.subagents, ["explore", "general"]))
    return { ok: false, why: `initialize config ${JSON.stringify(init.params.config)}, agents.update ${JSON.stringify(update?.params)}` };
  const warnings = stockTraces[0].find((r) => r.ev === "reply" && r.method === "initialize")?.result?.warnings;
  if (warnings) return { ok: false, why: `initialize warnings: ${JSON.stringify(warnings)}` };
  return { ok: true, why: `primaryAgents ${JSON.stringify(lists.primaryAgents)}, subagents ${JSON.stringify(lists.subagents)} (${update ? "by agents.update" : "in initialize"})` };
});

check("S2. stock: build's task_id exp-1 and gen-1 in the second process resume the children the first one started", () => {
  const results = [];
  for (const [agent, alias] of [["explore", "exp-1"], ["general", "gen-1"]]) {
    const first = buildTask((a) => a.subagent_type === agent && !a.task_id);
    const resumed = buildTask((a) => a.subagent_type === agent && a.task_id === alias);
    if (!first?.result || !resumed?.result) return { ok: false, why: `missing ${agent} task results in build's history` };
    const a = taskIdOf(first.result);
    const b = taskIdOf(resumed.result);
    if (!a || a !== b) return { ok: false, why: `${agent}: first task ${a}, "${alias}" in run 2 got ${b ?? JSON.stringify(resumed.result.slice(0, 200))}` };
    results.push(`${alias} → ${a}`);
  }
  const resumedExplore = stockRequests.find((r) => r.agent === "explore" && r.body.messages.some((m) => m.role === "user" && textOf(m.content).includes("Check again.")));
  if (!resumedExplore?.body.messages.some((m) => textOf(m.content).includes("List the files in the repo.")))
    return { ok: false, why: "the resumed explore request does not carry its first task's conversation" };
  const spawns = stockTraces.map((t) => t.find((r) => r.ev === "spawn")?.args);
  return { ok: true, why: `${results.join(", ")}, across two OpenCode processes (sidecar args ${JSON.stringify(spawns[1])})` };
});

check("S3. stock: the second run's user message carries the Resumable Sessions block (cache-stable: not in the system prompt)", () => {
  const run2 = build.filter((r) => runOf(r) === 2);
  if (run2.length === 0) return { ok: false, why: "no build request in run 2" };
  for (const r of run2) {
    const parts = lastUser(r.body).content;
    const block = Array.isArray(parts) ? parts.slice(1).map((p) => p.text ?? "").find((t) => t.includes("### Resumable Sessions")) : undefined;
    if (!block) return { ok: false, why: `build request #${r.n}: no ### Resumable Sessions part after the user's text: ${JSON.stringify(parts).slice(0, 300)}` };
    if (!/- explore: exp-1\b/.test(block) || !/- general: gen-1\b/.test(block)) return { ok: false, why: `request #${r.n}: block lacks exp-1 / gen-1: ${JSON.stringify(block)}` };
  }
  const inSystem = build.find((r) => systemTexts(r.body).some((t) => t.includes("### Resumable Sessions")));
  if (inSystem) return { ok: false, why: `build request #${inSystem.n} has the block in its system prompt` };
  const block = lastUser(run2[0].body).content.find((p) => p.text?.includes("### Resumable Sessions")).text;
  return { ok: true, why: `${run2.length} run-2 requests: ${JSON.stringify(block.split("\n").filter((l) => l.startsWith("- ")))}` };
});

check("S4. stock: task with an unknown subagent_type gets OpenCode's error and guidance listing explore and general", () => {
  const bad = buildTask((a) => a.subagent_type === "nonexistent");
  if (!bad?.result) return { ok: false, why: "no result for the nonexistent-agent call in build's history" };
  const err = "Unknown agent type: nonexistent is not a valid agent type";
  const at = bad.result.indexOf(err);
  if (at < 0) return { ok: false, why: `OpenCode's error text missing: ${JSON.stringify(bad.result.slice(0, 300))}` };
  const guidance = bad.result.slice(at + err.length);
  if (!guidance.includes("unknown_agent")) return { ok: false, why: `no guidance after the error: ${JSON.stringify(guidance.slice(0, 300))}` };
  const available = guidance.match(/Available: (.*)/)?.[1] ?? "";
  if (!/\bexplore\b/.test(available) || !/\bgeneral\b/.test(available)) return { ok: false, why: `the available list lacks explore/general: ${JSON.stringify(available)}` };
  return { ok: true, why: `available: ${available}` };
});

check("S5. stock: no phase reminder for build (its reminder agents are the default, orchestrator)", () => {
  if (build.length === 0) return { ok: false, why: "no build request" };
  const withIt = stockRequests.find((r) => r.body.messages.some((m) => textOf(m.content).includes("<internal_reminder>")));
  if (withIt) return { ok: false, why: `${withIt.agent} request #${withIt.n} carries the reminder` };
  return { ok: true, why: `none in ${stockRequests.length} requests` };
});

// Not a check: how often the shim had to pass a hook through.
{
  const replies = [...traceRun, ...traceDelete, ...stockTraces.flat()].filter((r) => r.ev === "reply" && r.method !== "initialize");
  const failedOpen = replies.filter((r) => !r.ok);
  const byReason = {};
  for (const r of failedOpen) byReason[`${r.method}:${r.reason}`] = (byReason[`${r.method}:${r.reason}`] ?? 0) + 1;
  const slowest = Math.max(0, ...replies.filter((r) => r.ok).map((r) => r.ms));
  console.log(`info: ${replies.length} sidecar calls, ${failedOpen.length} passed through ${JSON.stringify(byReason)}, slowest answered call ${slowest} ms`);
}

finish("e2e-opencode");
