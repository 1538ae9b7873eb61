// The scripted conversation of the model-fallback end-to-end test
// (scripts/e2e-models.sh), served by scripts/fakellm/server.mjs --scenario.
//
// The orchestrator's step is the number of tool results it has seen:
//   step 0  task explorer   (explorer's model is on a provider OpenCode has not connected)
//   step 1  task oracle     (oracle's model is available)
//   step 2  final text
// Subagents answer with text; the title request gets a short title.
//
// With hookwire (MODELS_SCENARIO_WAIT_FOR_PROVIDERS=1), the first
// orchestrator reply waits until the shim's trace shows providers.update
// sent, so the first child's chat.message never races the provider list:
// the run does not pass or fail by the timing of OpenCode's answer. The
// shim's own wait for the list is tested in shim/test/providers.test.mjs.

import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { task } from "./common.mjs";

export { agentOf } from "./common.mjs";

const STEPS = [
  () => task({ description: "Explore the repo", prompt: "List the files in the repo.", subagent_type: "explorer" }),
  () => task({ description: "Ask the oracle", prompt: "Is the design sound?", subagent_type: "oracle" }),
  () => ({ text: "MODELS_DONE: both subagents were asked." }),
];

export async function reply(body, { agent }) {
  switch (agent) {
    case "title":
      return { text: "Models session" };
    case "orchestrator": {
      const step = (body.messages ?? []).filter((m) => m.role === "tool").length;
      if (step === 0) await providersSent();
      return STEPS[Math.min(step, STEPS.length - 1)]();
    }
    case "explorer":
      return { text: "EXPLORER_REPLY: the repo has one file, README.md." };
    case "oracle":
      return { text: "ORACLE_REPLY: the design is sound." };
    default:
      return { text: "UNKNOWN_AGENT_REPLY" };
  }
}

/** Waits (at most 20 s) until the shim's trace shows providers.update sent; notes the outcome in FAKELLM_EVENTS. */
async function providersSent() {
  const trace = process.env.HOOKWIRE_SHIM_TRACE;
  const events = process.env.FAKELLM_EVENTS;
  if (process.env.MODELS_SCENARIO_WAIT_FOR_PROVIDERS !== "1" || !trace) return;
  const started = Date.now();
  while (Date.now() - started < 20_000) {
    const sent = existsSync(trace) && readFileSync(trace, "utf8").split("\n").some((l) => l.includes('"method":"providers.update"'));
    if (sent) {
      if (events) appendFileSync(events, JSON.stringify({ ev: "providers-sent", waitedMs: Date.now() - started }) + "\n");
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  if (events) appendFileSync(events, JSON.stringify({ ev: "providers-not-sent", waitedMs: Date.now() - started }) + "\n");
}
