// What the scenarios of the fake LLM (scenario.mjs, cache-scenario.mjs) and
// the scripts that read its request log (scripts/e2e-opencode-assert.mjs,
// scripts/cache-breaks-report.mjs) need to read an OpenAI-style request body
// the same way.

/** All the text of a message's content, parts joined by newlines. */
export function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("\n");
  return "";
}

/** The user's own words: the first text of a message's content (hookwire appends its parts after it). */
export function ownText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.find((p) => typeof p?.text === "string")?.text ?? "";
  return "";
}

export function systemText(body) {
  return (body.messages ?? []).filter((m) => m.role === "system").map((m) => textOf(m.content)).join("\n");
}

/**
 * The agent a request comes from: "title" for OpenCode's title generator,
 * else the AGENT_MARKER:<name> each agent's prompt in opencode.json carries,
 * else the one its conversation's first user message carries (OpenCode's
 * stock agents have no prompt of ours: the run's prompt or the task's
 * prompt names the agent instead).
 */
export function agentOf(body) {
  const sys = systemText(body);
  if (/title generator/i.test(sys)) return "title";
  const firstUser = ownText((body.messages ?? []).find((m) => m.role === "user")?.content);
  const m = sys.match(/AGENT_MARKER:([a-z]+)/) ?? firstUser.match(/AGENT_MARKER:([a-z]+)/);
  return m ? m[1] : "unknown";
}

/** A reply that calls the task tool with these arguments. */
export const task = (args) => ({ toolCalls: [{ name: "task", args }] });

/**
 * The child session id in a task tool result: `<task id="...">` (OpenCode
 * 1.14 and later), or the `task_id: ses_... (for resuming ...)` first line
 * of OpenCode 1.3 and older.
 */
export const taskIdOf = (text) =>
  text?.match(/<task\s(?:[^>]*\s)?id="([^"]+)"/)?.[1] ?? text?.match(/^task_id: (ses_[A-Za-z0-9]+)/m)?.[1];
