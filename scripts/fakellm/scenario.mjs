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

import { readFileSync, appendFileSync } from "node:fs";
import { task } from "./common.mjs";

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

let explorerReplies = 0;

export async function reply(body, { agent }) {
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
