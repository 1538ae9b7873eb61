#!/usr/bin/env node
// The checks of the runtime-fallback end-to-end test (scripts/e2e-fallback.sh),
// read from its scratch directory: base/ (OpenCode alone, when run) and hw/
// (with hookwire), each with requests.jsonl (every request the fake LLM got;
// mark-TURNn holds its line count when turn n started), run-TURNn.jsonl /
// .rc; hw/ also trace-run.jsonl (the shim's trace), sidecar.log and
// sessions.json (`hookwire sessions --json` after the last turn). Prints
// what OpenCode alone did, PASS/FAIL per check, and exits non-zero when
// any fails.

import { join } from "node:path";
import { taskIdOf, textOf } from "./fakellm/common.mjs";
import { check, finish, readJsonl, readText } from "./lib/checks.mjs";
import { LIMITED_MODEL } from "./fakellm/fallback-scenario.mjs";

const work = process.argv[2];
if (!work) {
  console.error("usage: e2e-fallback-assert.mjs WORKDIR");
  process.exit(2);
}
const TURNS = ["TURN1", "TURN2", "TURN3"];

function load(dir) {
  const requests = readJsonl(join(dir, "requests.jsonl"));
  const marks = TURNS.map((t) => Number(readText(join(dir, `mark-${t}`)).trim() || 0));
  const turnOf = (i) => marks.filter((m) => i >= m).length; // 1-based, by line index
  requests.forEach((r, i) => (r.turn = turnOf(i)));
  return { requests, limited: requests.filter((r) => r.body.model === LIMITED_MODEL && r.agent !== "title") };
}

/**
 * The task calls a turn made, with their results as the orchestrator's last
 * request of that turn carries them (its history holds earlier turns' calls
 * too: those are left out). args are as OpenCode stored them: an alias
 * hookwire rewrote reads as the session id.
 */
function taskResults(requests, turn) {
  const calls = (t) => {
    const last = requests.filter((r) => r.agent === "orchestrator" && r.turn === t).at(-1)?.body;
    if (!last) return [];
    const results = new Map(last.messages.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, textOf(m.content)]));
    return last.messages
      .filter((m) => m.role === "assistant" && Array.isArray(m.tool_calls))
      .flatMap((m) => m.tool_calls)
      .filter((tc) => tc.function?.name === "task")
      .map((tc) => ({ ...JSON.parse(tc.function.arguments), id: tc.id, result: results.get(tc.id) ?? "" }));
  };
  const earlier = new Set(turn > 1 ? calls(turn - 1).map((c) => c.id) : []);
  return calls(turn).filter((c) => !earlier.has(c.id));
}
const short = (s) => JSON.stringify(String(s ?? "").slice(0, 160));
const modelsOf = (requests, agent, pred = () => true) => [...new Set(requests.filter((r) => r.agent === agent && pred(r)).map((r) => r.body.model))];

// --- OpenCode alone ----------------------------------------------------------------
const baseDir = join(work, "base");
if (readText(join(baseDir, "run-TURN1.rc"))) {
  const base = load(baseDir);
  console.log(`OpenCode 1.18.33 alone, explorer and oracle on ${LIMITED_MODEL} (always 429), 3 turns:`);
  console.log(`  requests answered 429: ${base.limited.length} (by turn: ${TURNS.map((_, i) => base.limited.filter((r) => r.turn === i + 1).length).join(", ")})`);
  for (const [i] of TURNS.entries()) {
    for (const t of taskResults(base.requests, i + 1)) console.log(`  turn ${i + 1} ${t.subagent_type}${t.task_id ? ` (task_id ${t.task_id})` : ""}: ${short(t.result)}`);
  }
  check("B1 without hookwire, the first explorer task fails with OpenCode's rate-limit error",
    /Rate limit reached/.test(taskResults(base.requests, 1).find((t) => t.subagent_type === "explorer")?.result ?? ""),
    short(taskResults(base.requests, 1).find((t) => t.subagent_type === "explorer")?.result));
}

// --- With hookwire -------------------------------------------------------------------
const hwDir = join(work, "hw");
const hw = load(hwDir);
const trace = readJsonl(join(hwDir, "trace-run.jsonl"));
const sidecarLog = readJsonl(join(hwDir, "sidecar.log"));
let listed = { sessions: [], health: [] };
try {
  listed = JSON.parse(readText(join(hwDir, "sessions.json")) || "{}");
} catch {}

check("H0 every turn finished: exit 0 and the orchestrator's final text",
  TURNS.every((t) => readText(join(hwDir, `run-${t}.rc`)).trim() === "0" && readText(join(hwDir, `run-${t}.jsonl`)).includes(`FALLBACK_${t}_DONE`)),
  TURNS.map((t) => `${t} rc ${readText(join(hwDir, `run-${t}.rc`)).trim()}`).join(", "));

const t1 = taskResults(hw.requests, 1);
const exp1 = t1.find((t) => t.subagent_type === "explorer");
const expSession = taskIdOf(exp1?.result);
check("H1 turn 1: the parent's explorer task call returns explorer's own answer from the fallback (fake-model-2), in the task tool's form",
  !!expSession && /state="completed"/.test(exp1.result) && /EXPLORER_REPLY on fake-model-2/.test(exp1.result) && !/Subagent failed|Task cancelled/.test(exp1.result),
  short(exp1?.result));
const ora1 = t1.find((t) => t.subagent_type === "oracle");
check("H2 turn 1: oracle (no agentModels entry) ran on its parent's model (fake-model), never on the cooling model",
  /ORACLE_REPLY on fake-model:/.test(ora1?.result ?? "") && !hw.requests.some((r) => r.agent === "oracle" && r.body.model === LIMITED_MODEL),
  `result ${short(ora1?.result)}; oracle models ${JSON.stringify(modelsOf(hw.requests, "oracle"))}`);

const t2 = taskResults(hw.requests, 2).find((t) => t.description === "Resume exploring");
check("H3 turn 2: resuming exp-1 returns explorer's answer from the same child session, on the fallback",
  !!t2 && taskIdOf(t2.result) === expSession && /EXPLORER_REPLY on fake-model-2/.test(t2.result),
  `child ${expSession}; turn 2 result ${short(t2?.result)}`);

const t3 = taskResults(hw.requests, 3);
check("H4 turn 3: new explorer and oracle tasks run on their fallbacks at once (fake-model-2, fake-model)",
  /EXPLORER_REPLY on fake-model-2/.test(t3.find((t) => t.subagent_type === "explorer")?.result ?? "") &&
    /ORACLE_REPLY on fake-model:/.test(t3.find((t) => t.subagent_type === "oracle")?.result ?? ""),
  t3.map((t) => `${t.subagent_type}: ${short(t.result)}`).join("; "));

check("H5 explorer's requests after the first 429 all went to its agentModels fallback, fake-model-2",
  JSON.stringify(modelsOf(hw.requests, "explorer", (r) => r.body.model !== LIMITED_MODEL)) === JSON.stringify(["fake-model-2"]),
  JSON.stringify(modelsOf(hw.requests, "explorer")));

const byTurn = TURNS.map((_, i) => hw.limited.filter((r) => r.turn === i + 1).length);
check("H6 at most 2 requests were answered 429 in the whole session, none after the first turn",
  hw.limited.length >= 1 && hw.limited.length <= 2 && byTurn[1] === 0 && byTurn[2] === 0,
  `429s by turn: ${byTurn.join(", ")}`);

const expEntry = (listed.sessions ?? []).find((e) => e.taskId === expSession);
const sw = expEntry?.switches?.[0];
check("H7 `hookwire sessions --json` shows explorer's session on the fallback model, with the switch and its reason",
  expEntry?.alias === "exp-1" && expEntry?.model?.model === "fake/fake-model-2" && sw?.from === `fake/${LIMITED_MODEL}` && sw?.to === "fake/fake-model-2" &&
    /rate-limit/.test(sw?.reason ?? "") && !!sw?.at,
  JSON.stringify(expEntry ? { alias: expEntry.alias, model: expEntry.model, switches: expEntry.switches } : null));
check("H8 `hookwire sessions --json` shows the limited model's health: rate-limit, cooling",
  (listed.health ?? []).some((h) => h.model === `fake/${LIMITED_MODEL}` && h.class === "rate-limit" && Date.parse(h.until) > Date.now()),
  JSON.stringify(listed.health));

const switched = sidecarLog.filter((l) => l.message === "model switched");
check("H9 the sidecar logged each switch at info (from, to, reason); the shim aborted the child once and ran it again",
  switched.some((l) => l.level === "info" && l.from === `fake/${LIMITED_MODEL}` && l.to === "fake/fake-model-2") &&
    trace.filter((r) => r.ev === "fallback" && r.action === "abort").length === 1 &&
    trace.some((r) => r.ev === "fallback-rescue" && r.ok === true && r.stored === true),
  `${switched.length} switches logged; trace ${JSON.stringify(trace.filter((r) => r.ev?.startsWith?.("fallback")))}`);

// Under `opencode run` no TUI shows the toast: the shim says the switch on
// stderr (where OpenCode prints the stopped attempt as a failed task), and
// that the task finished on the fallback.
const turn1Err = readText(join(work, "hw", "run-TURN1.err"));
const said = turn1Err.split("\n").filter((l) => l.startsWith("hookwire: "));
check("H10 opencode run: the terminal (stderr) says the switch and its reason, then that the task finished on the fallback, once each",
  said.filter((l) => l.includes(`fake/${LIMITED_MODEL} failed (rate-limit`) && l.includes("switching to fake/fake-model-2") && l.includes('"Task cancelled"')).length === 1 &&
    said.filter((l) => l.includes("task finished on fake/fake-model-2 after")).length === 1 &&
    said.findIndex((l) => l.includes("switching to")) < said.findIndex((l) => l.includes("task finished on")),
  JSON.stringify(said));

// --- The user's own session under `opencode serve` ------------------------------------
const serveDir = join(work, "serve");
const served = load(serveDir);
let messages = [];
try {
  messages = JSON.parse(readText(join(serveDir, "messages.json")) || "[]");
} catch {}
const users = messages.filter((m) => m.info?.role === "user");
const lastText = messages.filter((m) => m.info?.role === "assistant").at(-1)?.parts?.filter((p) => p.type === "text").map((p) => p.text).join("") ?? "";
const orchestrator429 = served.limited.filter((r) => r.agent === "orchestrator").length;
check("U1 opencode serve: the user's session on a 429 model is aborted and its message sent again on its fallback, once",
  users.length === 2 && users[0].info.model?.modelID === "fake-model-3" && users[1].info.model?.modelID === "fake-model-2" &&
    users[1].parts?.some((p) => p.type === "text" && p.text.includes("TURN3")) && orchestrator429 === 1 &&
    /FALLBACK_TURN3_DONE/.test(lastText) &&
    JSON.stringify(modelsOf(served.requests, "orchestrator", (r) => r.body.model !== LIMITED_MODEL)) === JSON.stringify(["fake-model-2"]),
  `user messages on ${JSON.stringify(users.map((u) => u.info.model?.modelID))}; orchestrator 429s ${orchestrator429}; last text ${short(lastText)}`);

finish("e2e-fallback");
