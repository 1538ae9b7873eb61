// The scripted conversation of the end-to-end test (scripts/e2e-opencode.sh).
//
// Each agent's prompt in opencode.json carries a marker (AGENT_MARKER:<name>),
// so the agent of a request is read from its system messages. The
// orchestrator's step is the number of tool results it has seen so far:
//
//   step 0  task explorer                    -> a new child session (alias exp-1)
//   step 1  task explorer, task_id "exp-1"   -> hookwire rewrites the alias: same child resumed
//   step 2  task oracle                      -> a second agent (ora-1)
//   step 3  task with subagent_type "nonexistent" -> OpenCode's error + hookwire's guidance
//   step 4  (the sidecar is killed first) task explorer -> served by the restarted sidecar
//   step 5  final text
//
// Subagents answer with text. The title request (OpenCode's title
// generator) gets a short title.
//
// The stock-agents runs (no agent definitions in opencode.json) name their
// agent in the first user message instead: the run's prompt says
// AGENT_MARKER:build, each task's prompt AGENT_MARKER:explore or :general.
// Two `opencode run` processes, the second continuing the first's session;
// build's step is the number of tool results after the newest user message:
//
//   STOCK_RUN1  0 task explore (exp-1)  1 task general (gen-1)
//               2 task subagent_type "nonexistent"  3 final text
//               (FAKELLM_HOLD_FINAL_MS: the final text waits that long)
//   STOCK_RUN2  0 task explore task_id "exp-1"  1 task general task_id "gen-1"
//               2 final text

import { readFileSync, appendFileSync } from "node:fs";
import { ownText, task } from "./common.mjs";

export { agentOf, systemText } from "./common.mjs";

export const KILL_AT_STEP = 4;

const ORCHESTRATOR_STEPS = [
  () => task({ description: "Explore the repo", prompt: "List the files in the repo.", subagent_type: "explorer" }),
  () => task({ description: "Resume exploring", prompt: "Check again.", subagent_type: "explorer", task_id: "exp-1" }),
  () => task({ description: "Ask the oracle", prompt: "Is the design sound?", subagent_type: "oracle" }),
  () => task({ description: "Bad subagent", prompt: "Do something.", subagent_type: "nonexistent" }),
  async () => {
    await killSidecar();
    return task({ description: "Explore after restart", prompt: "Look once more.", subagent_type: "explorer" });
  },
  () => ({ text: "ORCHESTRATOR_DONE: all steps finished." }),
];

const BUILD_STEPS = {
  STOCK_RUN1: [
    () => task({ description: "Look around", prompt: "AGENT_MARKER:explore List the files in the repo.", subagent_type: "explore" }),
    () => task({ description: "Summarise the README", prompt: "AGENT_MARKER:general Summarise README.md.", subagent_type: "general" }),
    () => task({ description: "Bad subagent", prompt: "Do something.", subagent_type: "nonexistent" }),
    async () => (await hold(), { text: "BUILD_RUN1_DONE: looked, summarised." }),
  ],
  STOCK_RUN2: [
    () => task({ description: "Look again", prompt: "Check again.", subagent_type: "explore", task_id: "exp-1" }),
    () => task({ description: "Summarise again", prompt: "Once more.", subagent_type: "general", task_id: "gen-1" }),
    () => ({ text: "BUILD_RUN2_DONE: both resumed." }),
  ],
  // The TUI checks of the registry test (scripts/e2e-registry.sh): a
  // subagent that runs for a while (its reply waits SLOW_MS), stopped
  // with esc esc or the stop command; six subagents in one session.
  STOCK_TUI_SLOW: [
    () => task({ description: "Slow audit", prompt: "AGENT_MARKER:general SLOW_MS:60000 Audit slowly.", subagent_type: "general" }),
    () => ({ text: "BUILD_SLOW_DONE: audited." }),
  ],
  STOCK_TUI_STOP: [
    () => task({ description: "Slow sweep", prompt: "AGENT_MARKER:general SLOW_MS:60000 Sweep slowly.", subagent_type: "general" }),
    () => ({ text: "BUILD_STOP_DONE: swept." }),
  ],
  // T10-T11: explorer (opencode.json: on fake-model-3, which answers 429;
  // its agentModels fallback fake-model-2) rescued by hookwire's fallback.
  STOCK_TUI_LIMIT: [
    () => task({ description: "Limited look", prompt: "Look at the limits.", subagent_type: "explorer" }),
    () => ({ text: "BUILD_LIMIT_DONE: looked despite the limit." }),
  ],
  STOCK_TUI_SIX: [
    ...[1, 2, 3, 4, 5, 6].map((i) => () => task({ description: `Six part ${i}`, prompt: `AGENT_MARKER:explore Look at part ${i}.`, subagent_type: "explore" })),
    () => ({ text: "BUILD_SIX_DONE: six parts looked at." }),
  ],
};

/**
 * With FAKELLM_HOLD_FINAL_MS=N the final answer of STOCK_RUN1 waits N ms
 * first, so the run lasts long enough for what OpenCode does late in a
 * process (1.17+ call the ./server entry's setup about 30 s in); noted in
 * FAKELLM_EVENTS.
 */
async function hold() {
  const ms = Number(process.env.FAKELLM_HOLD_FINAL_MS ?? 0);
  if (!(ms > 0)) return;
  const events = process.env.FAKELLM_EVENTS;
  if (events) appendFileSync(events, JSON.stringify({ ev: "hold", ms, t: Date.now() }) + "\n");
  await new Promise((r) => setTimeout(r, ms));
  if (events) appendFileSync(events, JSON.stringify({ ev: "held", ms, t: Date.now() }) + "\n");
}

/** Tool results after the newest user message. */
function stepOf(body) {
  const msgs = body.messages ?? [];
  let lastUser = -1;
  msgs.forEach((m, i) => m.role === "user" && (lastUser = i));
  return msgs.slice(lastUser + 1).filter((m) => m.role === "tool").length;
}

let explorerReplies = 0;
const stockReplies = { explore: 0, general: 0 };

/** The model that always answers 429 (the TUI test's explorer runs on it: e2e-registry-config.mjs --tui). */
export const LIMITED_MODEL = "fake-model-3";

export async function reply(body, { agent }) {
  if (agent !== "title" && body.model === LIMITED_MODEL)
    return {
      status: 429,
      headers: { "retry-after": "2" },
      error: { message: `Rate limit reached for ${LIMITED_MODEL}`, type: "rate_limit_exceeded", code: "rate_limit_exceeded" },
    };
  switch (agent) {
    case "title":
      return { text: "E2E session" };
    case "orchestrator": {
      const step = (body.messages ?? []).filter((m) => m.role === "tool").length;
      const next = ORCHESTRATOR_STEPS[Math.min(step, ORCHESTRATOR_STEPS.length - 1)];
      return next();
    }
    case "explorer":
      explorerReplies++;
      return { text: `EXPLORER_REPLY_${explorerReplies}: the repo has one file, README.md.` };
    case "oracle":
      return { text: "ORACLE_REPLY: the design is sound." };
    case "build": {
      const users = (body.messages ?? []).filter((m) => m.role === "user");
      const run = ownText(users.at(-1)?.content).match(/STOCK_(?:RUN\d|TUI_[A-Z]+)/)?.[0];
      const steps = BUILD_STEPS[run];
      if (!steps) return { text: `UNEXPECTED_BUILD_TURN ${run}` };
      return steps[Math.min(stepOf(body), steps.length - 1)]();
    }
    case "explore":
    case "general": {
      // SLOW_MS:n in the task's prompt: the reply waits n ms (the TUI
      // shows the subagent running meanwhile; esc esc drops the request).
      const users = (body.messages ?? []).filter((m) => m.role === "user");
      const slow = Number(ownText(users[0]?.content).match(/SLOW_MS:(\d+)/)?.[1] ?? 0);
      if (slow > 0 && users.length === 1) await new Promise((r) => setTimeout(r, slow));
      stockReplies[agent]++;
      return { text: `${agent.toUpperCase()}_REPLY_${stockReplies[agent]}: the repo has one file, README.md.` };
    }
    default:
      return { text: "UNKNOWN_AGENT_REPLY" };
  }
}

// Kills the sidecar the shim runs (its pid is in the shim's trace file) and
// waits until the shim has restarted it and the new one answered initialize,
// so the hooks of the next tool call meet a served sidecar. Both facts go to
// FAKELLM_EVENTS for the assertions.
async function killSidecar() {
  const traceFile = process.env.HOOKWIRE_SHIM_TRACE;
  const events = process.env.FAKELLM_EVENTS;
  if (!traceFile) return;
  const records = () =>
    readFileSync(traceFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  const spawns = records().filter((r) => r.ev === "spawn");
  const victim = spawns.at(-1)?.pid;
  if (!victim) return;
  try {
    process.kill(victim, "SIGKILL");
  } catch (err) {
    if (events) appendFileSync(events, JSON.stringify({ ev: "kill-failed", pid: victim, error: String(err) }) + "\n");
    return;
  }
  const killedAt = Date.now();
  if (events) appendFileSync(events, JSON.stringify({ ev: "killed", pid: victim, t: killedAt }) + "\n");
  const deadline = killedAt + 5000;
  while (Date.now() < deadline) {
    const ready = records().find((r) => r.ev === "reply" && r.method === "initialize" && r.ok && r.pid !== victim && r.t > killedAt);
    if (ready) {
      if (events) appendFileSync(events, JSON.stringify({ ev: "restarted", pid: ready.pid, t: ready.t }) + "\n");
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
