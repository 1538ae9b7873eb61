#!/usr/bin/env node
// The checks of the end-to-end test (scripts/e2e-opencode.sh), read from its
// scratch directory: requests.jsonl (every request body the fake LLM got),
// fakellm-events.jsonl (when it killed the sidecar), trace-run.jsonl and
// trace-delete.jsonl (the shim's trace: calls, replies, sidecar pids,
// status/sessions.list after each session.deleted), run.jsonl / run.rc.
// Prints PASS/FAIL per check and exits non-zero when any fails.

import { basename, dirname, join } from "node:path";
import { textOf, taskIdOf } from "./fakellm/common.mjs";
import { check as record, finish, readJsonl as readJsonlFile, readText as readTextFile } from "./lib/checks.mjs";

const work = process.argv[2];
if (!work) {
  console.error("usage: e2e-opencode-assert.mjs WORKDIR");
  process.exit(2);
}

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

check("1. after delegating to explorer, the orchestrator's system messages list exp-1 under ### Resumable Sessions", () => {
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

check("3. the orchestrator's latest user message carries the <internal_reminder> part; subagents' do not", () => {
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
  const hookMethods = new Set(["tool.execute.before", "tool.execute.after", "chat.message", "chat.system.transform", "chat.messages.transform"]);
  const nextCall = traceRun.find((r) => r.ev === "call" && hookMethods.has(r.method) && r.t >= killed.t);
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
  // Both OpenCode processes ran in the same project: the shim's default gave
  // both sidecars the same per-project file under $XDG_STATE_HOME/hookwire.
  const stateArg = (trace) => {
    const args = trace.find((r) => r.ev === "spawn")?.args ?? [];
    const i = args.indexOf("--state");
    return i >= 0 ? args[i + 1] : undefined;
  };
  const runState = stateArg(traceRun);
  const deleteState = stateArg(traceDelete);
  const stateDir = join(work, "xdg", "state", "hookwire");
  if (!runState || runState !== deleteState) return { ok: false, why: `the two sidecars got different state files: ${runState} and ${deleteState}` };
  if (dirname(runState) !== stateDir || !/^project-[0-9a-f]{16}\.json$/.test(basename(runState)))
    return { ok: false, why: `state file ${runState} is not the default per-project one under ${stateDir}` };
  return { ok: true, why: `${beforeEntries.length} entries before (from the default state file ${basename(runState)}), ${left.length} entries of any parent after` };
});

// Not a check: how often the shim had to pass a hook through.
{
  const replies = [...traceRun, ...traceDelete].filter((r) => r.ev === "reply" && r.method !== "initialize");
  const failedOpen = replies.filter((r) => !r.ok);
  const byReason = {};
  for (const r of failedOpen) byReason[`${r.method}:${r.reason}`] = (byReason[`${r.method}:${r.reason}`] ?? 0) + 1;
  const slowest = Math.max(0, ...replies.filter((r) => r.ok).map((r) => r.ms));
  console.log(`info: ${replies.length} sidecar calls, ${failedOpen.length} passed through ${JSON.stringify(byReason)}, slowest answered call ${slowest} ms`);
}

finish("e2e-opencode");
