#!/usr/bin/env node
// A scripted OpenAI-compatible LLM for the end-to-end test. No dependencies.
//
//   node server.mjs --log REQUESTS.jsonl --port-file PORT [--scenario ./scenario.mjs]
//
// Listens on 127.0.0.1 on an ephemeral port (written to --port-file), answers
// POST /v1/chat/completions with SSE chunks, and appends every request body
// to --log as one JSON line ({n, t, agent, body}). What to answer is decided
// by the scenario module's reply(request) -> {text} | {toolCalls: [{name, args}]}
// (it may be async, e.g. to disturb the system under test first), or
// {status, headers?, error} for a provider error (an HTTP status other than
// 200 with an OpenAI-style `{"error": ...}` body, e.g. a 429 rate limit).
// Exits by itself after --max-seconds (default 300) so it can never linger.
// With --prefix-cache 1 it reports cached prompt tokens as a provider's
// prefix cache would (usage.prompt_tokens_details.cached_tokens): the
// longest common prefix of the request's tools and messages, serialized,
// with any earlier request's, at 4 characters a token.

import { appendFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const logFile = args.log;
const portFile = args["port-file"];
const scenario = await import(pathToFileURL(resolve(args.scenario ?? new URL("./scenario.mjs", import.meta.url).pathname)).href);
const maxSeconds = Number(args["max-seconds"] ?? 300);
const prefixCache = args["prefix-cache"] === "1";
const seenPrompts = [];

/** The usage of a request: fixed figures, or with --prefix-cache its prompt's size and cached prefix. */
function usageOf(body) {
  if (!prefixCache) return { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const prompt = JSON.stringify({ tools: body.tools ?? [], messages: body.messages ?? [] });
  let longest = 0;
  for (const earlier of seenPrompts) {
    const n = Math.min(earlier.length, prompt.length);
    let i = 0;
    while (i < n && earlier.charCodeAt(i) === prompt.charCodeAt(i)) i++;
    longest = Math.max(longest, i);
  }
  seenPrompts.push(prompt);
  const promptTokens = Math.ceil(prompt.length / 4);
  return { prompt_tokens: promptTokens, completion_tokens: 5, total_tokens: promptTokens + 5, prompt_tokens_details: { cached_tokens: Math.floor(longest / 4) } };
}

let n = 0;

function sse(res, chunks) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.write("data: [DONE]\n\n");
  res.end();
}

function completionChunks(id, model, answer, usage) {
  const base = { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model };
  const chunk = (delta, finish = null, extra = {}) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }], ...extra });
  if (answer.toolCalls?.length) {
    return [
      chunk({ role: "assistant", content: null }),
      ...answer.toolCalls.map((tc, i) =>
        chunk({
          tool_calls: [{ index: i, id: tc.id, type: "function", function: { name: tc.name, arguments: JSON.stringify(tc.args) } }],
        }),
      ),
      chunk({}, "tool_calls", { usage }),
    ];
  }
  return [chunk({ role: "assistant", content: "" }), chunk({ content: answer.text ?? "" }), chunk({}, "stop", { usage })];
}

const server = createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (d) => (body += d));
  req.on("end", async () => {
    try {
      if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      const parsed = JSON.parse(body);
      const number = ++n;
      const agent = scenario.agentOf(parsed);
      appendFileSync(logFile, JSON.stringify({ n: number, t: Date.now(), agent, body: parsed }) + "\n");
      const usage = usageOf(parsed);
      const answer = await scenario.reply(parsed, { n: number, agent });
      (answer.toolCalls ?? []).forEach((tc, i) => (tc.id ??= `call_${number}_${i}`));
      appendFileSync(logFile.replace(/\.jsonl$/, "") + ".replies.jsonl", JSON.stringify({ n: number, agent, answer }) + "\n");
      if (answer.status) {
        res.writeHead(answer.status, { "content-type": "application/json", ...(answer.headers ?? {}) });
        res.end(JSON.stringify({ error: answer.error ?? { message: `error ${answer.status}` } }));
        return;
      }
      if (parsed.stream === false) {
        const message = answer.toolCalls?.length
          ? { role: "assistant", content: null, tool_calls: answer.toolCalls.map((tc) => ({ id: tc.id, type: "function", function: { name: tc.name, arguments: JSON.stringify(tc.args) } })) }
          : { role: "assistant", content: answer.text ?? "" };
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: `cmpl-${number}`, object: "chat.completion", created: 0, model: parsed.model, choices: [{ index: 0, message, finish_reason: answer.toolCalls?.length ? "tool_calls" : "stop" }], usage }));
        return;
      }
      sse(res, completionChunks(`cmpl-${number}`, parsed.model, answer, usage));
    } catch (err) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(err?.stack ?? err) } }));
    }
  });
});

server.listen(0, "127.0.0.1", () => {
  writeFileSync(portFile, String(server.address().port));
});
setTimeout(() => process.exit(0), maxSeconds * 1000).unref();
process.on("SIGTERM", () => process.exit(0));
process.on("SIGINT", () => process.exit(0));
