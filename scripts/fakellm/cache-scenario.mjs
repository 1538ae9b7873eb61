// The scripted conversation of the cache-break measurement
// (scripts/cache-breaks.sh), served by scripts/fakellm/server.mjs --scenario.
//
// Four user turns to one orchestrator session (each a separate
// `opencode run --session`), with delegations to explorer and oracle and
// resumes by alias. What the orchestrator does is a pure function of its
// history: the turn is read from the newest user message's own text
// ("TURN<n>:"), the step from the tool results after that message.
//
//   turn 1  task explorer EXP_A (new: exp-1); task oracle ORA_A (new: ora-1); text
//   turn 2  task explorer task_id exp-1 (resume); task explorer EXP_B (new: exp-2); text
//   turn 3  task oracle task_id ora-1 (resume); task explorer task_id exp-1 (resume); text
//   turn 4  task explorer EXP_C (new: exp-3); text
//
// Resumes pass the alias ("exp-1", rewritten by hookwire) unless
// CACHE_SCENARIO_RESUME=id, which passes the child's real session id read
// from the earlier task result (what a model does without hookwire: the
// baseline run without the plugin, where an alias would be rejected).
//
// Each explorer task reads README.md first (two requests per task, so child
// sessions have requests within a turn too); the oracle answers at once.
// Every reply depends only on the request, never on arrival order, so the
// three runs send the same conversation.

import { ownText, systemText, task, taskIdOf, textOf } from "./common.mjs";

export { agentOf, ownText, systemText } from "./common.mjs";

const RESUME_BY = process.env.CACHE_SCENARIO_RESUME === "id" ? "id" : "alias";

/** The real id of the child session a task call with this prompt marker started. */
function childIdOf(body, marker) {
  const msgs = body.messages ?? [];
  const call = msgs
    .filter((m) => m.role === "assistant" && Array.isArray(m.tool_calls))
    .flatMap((m) => m.tool_calls)
    .find((tc) => tc.function?.name === "task" && String(tc.function.arguments).includes(marker));
  const result = call && msgs.find((m) => m.role === "tool" && m.tool_call_id === call.id);
  return taskIdOf(textOf(result?.content));
}

function resume(body, alias, marker) {
  if (RESUME_BY === "alias") return alias;
  return childIdOf(body, marker) ?? alias;
}

const TURNS = {
  1: [
    () => task({ description: "Map the repo", prompt: "EXP_A: List the files in the repo.", subagent_type: "explorer" }),
    () => task({ description: "Review the design", prompt: "ORA_A: Is the design sound?", subagent_type: "oracle" }),
    () => ({ text: "TURN1_DONE: mapped and reviewed." }),
  ],
  2: [
    (b) => task({ description: "Map the repo again", prompt: "Check README.md again.", subagent_type: "explorer", task_id: resume(b, "exp-1", "EXP_A") }),
    () => task({ description: "Find the tests", prompt: "EXP_B: Find the tests.", subagent_type: "explorer" }),
    () => ({ text: "TURN2_DONE: no tests yet." }),
  ],
  3: [
    (b) => task({ description: "Review the design again", prompt: "Reconsider with the new findings.", subagent_type: "oracle", task_id: resume(b, "ora-1", "ORA_A") }),
    (b) => task({ description: "Map the repo once more", prompt: "One more look.", subagent_type: "explorer", task_id: resume(b, "exp-1", "EXP_A") }),
    () => ({ text: "TURN3_DONE: design confirmed." }),
  ],
  4: [
    () => task({ description: "Check the docs", prompt: "EXP_C: Check the docs.", subagent_type: "explorer" }),
    () => ({ text: "TURN4_DONE: all done." }),
  ],
};
export const TURN_COUNT = Object.keys(TURNS).length;

/** Tool results after the newest user message: how far this turn has got. */
function stepOf(body) {
  const msgs = body.messages ?? [];
  let lastUser = -1;
  msgs.forEach((m, i) => m.role === "user" && (lastUser = i));
  return msgs.slice(lastUser + 1).filter((m) => m.role === "tool").length;
}

function newestUserText(body) {
  return ownText((body.messages ?? []).filter((m) => m.role === "user").at(-1)?.content);
}

export async function reply(body, { agent }) {
  switch (agent) {
    case "title":
      return { text: "Cache measurement" };
    case "orchestrator": {
      const turn = Number(newestUserText(body).match(/TURN(\d+)/)?.[1] ?? 0);
      const steps = TURNS[turn];
      if (!steps) return { text: `UNEXPECTED_TURN ${turn}` };
      return steps[Math.min(stepOf(body), steps.length - 1)](body);
    }
    case "explorer": {
      const users = (body.messages ?? []).filter((m) => m.role === "user").length;
      if (stepOf(body) === 0) {
        const cwd = systemText(body).match(/Working directory: (.+)/)?.[1]?.trim() ?? ".";
        return { toolCalls: [{ name: "read", args: { filePath: `${cwd}/README.md` } }] };
      }
      return { text: `EXPLORER_REPLY (task ${users}): the repo has one file, README.md.` };
    }
    case "oracle": {
      const users = (body.messages ?? []).filter((m) => m.role === "user").length;
      return { text: `ORACLE_REPLY (question ${users}): the design is sound.` };
    }
    default:
      return { text: "UNKNOWN_AGENT_REPLY" };
  }
}
