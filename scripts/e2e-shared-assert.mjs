#!/usr/bin/env node
// Judges what scripts/e2e-shared.sh left in its scratch directory:
// requests.jsonl (every request body the fake LLM got), the runs' exit
// codes and `hookwire sessions --json` after them.
//
//   node e2e-shared-assert.mjs WORK PARENT_A PARENT_B

import { join } from "node:path";
import { textOf, taskIdOf } from "./fakellm/common.mjs";
import { check, finish, readJsonl, readText } from "./lib/checks.mjs";

const [work, parentA, parentB] = process.argv.slice(2);
const requests = readJsonl(join(work, "requests.jsonl")).map((r) => r.body ?? r);
const all = (body) => (body.messages ?? []).map((m) => textOf(m.content)).join("\n");

for (const name of ["a", "b", "ra", "rb"]) {
  const rc = readText(join(work, `${name}.rc`)).trim();
  check(`opencode run ${name} exited 0`, rc === "0", `exit ${rc || "?"}; see ${name}.err`);
}

/** The child session id in the result of the task call whose prompt starts with marker, from any request's history. */
function childOf(marker) {
  for (const body of requests) {
    const msgs = body.messages ?? [];
    const results = new Map(msgs.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, textOf(m.content)]));
    for (const tc of msgs.filter((m) => m.role === "assistant" && Array.isArray(m.tool_calls)).flatMap((m) => m.tool_calls)) {
      let args = {};
      try {
        args = JSON.parse(tc.function?.arguments ?? "{}");
      } catch {}
      if (tc.function?.name === "task" && String(args.prompt ?? "").startsWith(marker)) {
        const id = taskIdOf(results.get(tc.id));
        if (id) return id;
      }
    }
  }
  return undefined;
}

for (const [x, other, parent] of [["A", "B", parentA], ["B", "A", parentB]]) {
  const first = childOf(`CHILD_${x}:`);
  const resumed = childOf(`RESUMED_${x}:`);
  check(`parent ${x}'s first run started a child session`, Boolean(first), `${first}`);
  check(`the resume of parent ${x}'s exp-1, in another OpenCode process, reached that same child`,
    Boolean(first) && resumed === first, `first ${first}, resumed ${resumed}`);
  const childRequest = requests.find((b) => all(b).includes(`RESUMED_${x}:`) && !/title generator/i.test(all(b)));
  check(`the resumed child's request holds its first prompt (CHILD_${x}) and not the other's`,
    Boolean(childRequest) && all(childRequest).includes(`CHILD_${x}:`) && !all(childRequest).includes(`CHILD_${other}:`));
  void parent;
}

let listed = [];
try {
  listed = JSON.parse(readText(join(work, "sessions.json"))).sessions ?? [];
} catch {}
const has = (parent, marker) => {
  const child = childOf(marker);
  return listed.some((e) => e.parent === parent && e.alias === "exp-1" && e.taskId === child);
};
check("hookwire sessions --json lists parent A's exp-1 with its child", has(parentA, "CHILD_A:"), JSON.stringify(listed.map((e) => `${e.parent} ${e.alias} ${e.taskId}`)));
check("hookwire sessions --json lists parent B's exp-1 with its child", has(parentB, "CHILD_B:"));

finish("shared state e2e");
