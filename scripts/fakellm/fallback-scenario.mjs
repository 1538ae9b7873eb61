// The scripted conversation of the runtime-fallback end-to-end test
// (scripts/e2e-fallback.sh), served by scripts/fakellm/server.mjs --scenario.
//
// One `opencode run` per turn, each continuing the same session; the run's
// prompt names its turn (TURN1, TURN2, TURN3). The orchestrator's step is
// the number of tool results after the newest user message:
//   TURN1  0 task explorer (a new child)   1 task oracle (a new child)   2 final text
//   TURN2  0 task explorer task_id "exp-1" (resume)                     1 final text
//   TURN3  0 task explorer (a new child)   1 task oracle (a new child)   2 final text
// Both subagents are configured on fake/fake-model-3, which always answers
// (for any agent but the title generator) HTTP 429 (retry-after: FALLBACK_RETRY_AFTER seconds, default 2) with an
// OpenAI-style rate_limit_exceeded body. On any other model a subagent
// answers with text naming the model it ran on.

import { ownText, task } from "./common.mjs";

export { agentOf } from "./common.mjs";

export const LIMITED_MODEL = "fake-model-3";

const TURNS = {
  TURN1: [
    () => task({ description: "Explore the repo", prompt: "List the files in the repo.", subagent_type: "explorer" }),
    () => task({ description: "Ask the oracle", prompt: "Is the design sound?", subagent_type: "oracle" }),
  ],
  TURN2: [() => task({ description: "Resume exploring", prompt: "Check again.", subagent_type: "explorer", task_id: "exp-1" })],
  TURN3: [
    () => task({ description: "Explore more", prompt: "Look at the docs.", subagent_type: "explorer" }),
    () => task({ description: "Ask again", prompt: "Any risks?", subagent_type: "oracle" }),
  ],
};

function turnOf(messages) {
  const users = messages.filter((m) => m.role === "user").map((m) => ownText(m.content));
  for (let i = users.length - 1; i >= 0; i--) {
    const m = users[i].match(/\bTURN[123]\b/);
    if (m) return m[0];
  }
  return "TURN1";
}

/** The answer of fake-model-3: always HTTP 429. */
const rateLimited = () => ({
  status: 429,
  headers: { "retry-after": process.env.FALLBACK_RETRY_AFTER ?? "2" },
  error: { message: `Rate limit reached for ${LIMITED_MODEL}`, type: "rate_limit_exceeded", code: "rate_limit_exceeded" },
});

export function reply(body, { agent }) {
  const messages = body.messages ?? [];
  if (agent !== "title" && body.model === LIMITED_MODEL) return rateLimited();
  switch (agent) {
    case "title":
      return { text: "Fallback session" };
    case "orchestrator": {
      let lastUser = -1;
      messages.forEach((m, i) => m.role === "user" && (lastUser = i));
      const step = messages.slice(lastUser + 1).filter((m) => m.role === "tool").length;
      const turn = turnOf(messages);
      return step < TURNS[turn].length ? TURNS[turn][step]() : { text: `FALLBACK_${turn}_DONE` };
    }
    case "explorer":
    case "oracle":
      return { text: `${agent.toUpperCase()}_REPLY on ${body.model}: user messages ${messages.filter((m) => m.role === "user").length}` };
    default:
      return { text: "UNKNOWN_AGENT_REPLY" };
  }
}
