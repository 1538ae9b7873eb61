// The scripted conversation of the shared-state end-to-end test
// (scripts/e2e-shared.sh, issue 20), served by scripts/fakellm/server.mjs
// --scenario. Two `opencode run` processes on one project at the same time
// each delegate once; then two more resume each parent's alias:
//
//   "SHARE_A: ..."   task explorer "CHILD_A: ..." (new: exp-1 under A); text
//   "SHARE_B: ..."   task explorer "CHILD_B: ..." (new: exp-1 under B); text
//   "RESUME_A: ..."  task explorer task_id exp-1 "RESUMED_A: ..."; text
//   "RESUME_B: ..."  task explorer task_id exp-1 "RESUMED_B: ..."; text
//
// The explorer answers at once. A resume that reached the right child is a
// request whose history holds both that child's first prompt and the
// resume's (scripts/e2e-shared-assert.mjs).

import { ownText, task } from "./common.mjs";

export { agentOf, ownText, systemText } from "./common.mjs";

const TURNS = {
  SHARE_A: () => task({ description: "Explore A", prompt: "CHILD_A: Explore the first half.", subagent_type: "explorer" }),
  SHARE_B: () => task({ description: "Explore B", prompt: "CHILD_B: Explore the second half.", subagent_type: "explorer" }),
  RESUME_A: () => task({ description: "Explore A again", prompt: "RESUMED_A: Go on with the first half.", subagent_type: "explorer", task_id: "exp-1" }),
  RESUME_B: () => task({ description: "Explore B again", prompt: "RESUMED_B: Go on with the second half.", subagent_type: "explorer", task_id: "exp-1" }),
};

/** Tool results after the newest user message: how far this turn has got. */
function stepOf(body) {
  const msgs = body.messages ?? [];
  let lastUser = -1;
  msgs.forEach((m, i) => m.role === "user" && (lastUser = i));
  return msgs.slice(lastUser + 1).filter((m) => m.role === "tool").length;
}

export async function reply(body, { agent }) {
  switch (agent) {
    case "title":
      return { text: "Shared state" };
    case "orchestrator": {
      const text = ownText((body.messages ?? []).filter((m) => m.role === "user").at(-1)?.content);
      const turn = text.match(/(SHARE_A|SHARE_B|RESUME_A|RESUME_B):/)?.[1];
      if (!turn) return { text: "UNEXPECTED_TURN" };
      return stepOf(body) === 0 ? TURNS[turn]() : { text: `${turn}_DONE` };
    }
    case "explorer":
      return { text: "EXPLORER_REPLY: done." };
    default:
      return { text: "UNKNOWN_AGENT_REPLY" };
  }
}
