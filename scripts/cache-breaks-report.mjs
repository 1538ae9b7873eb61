#!/usr/bin/env node
// Counts prompt-cache breaks in what the fake LLM received during the three
// runs of scripts/cache-breaks.sh, prints a table, writes it as JSON, and
// checks the result. Exits non-zero when a check fails.
//
//   node cache-breaks-report.mjs [--json OUT.json] WORKDIR
//
// WORKDIR holds one directory per run (baseline, off, stable), each with
// requests.jsonl ({n, agent, body} per LLM request, body as sent in OpenAI
// format), requests.replies.jsonl, trace-turn<k>.jsonl (the shim's trace) and
// turn<k>.rc.
//
// Definitions (also in scripts/CACHE_RESULTS.md):
// - Session: an agent's conversation, identified by the agent (the
//   AGENT_MARKER in its system prompt) and the user's own text of its first
//   user message (the first text part: hookwire only appends parts after it).
//   Title-generation requests are left out of the analysis (each is a
//   one-request conversation of its own that cannot break a cache) and
//   counted separately.
// - Message bytes: the UTF-8 length of JSON.stringify(message), for each
//   element of the request's `messages` (system messages included). The
//   request's prompt bytes are their sum (`tools` and the sampling fields are
//   not counted: they never changed in these runs, checked below).
// - Cache break: a request of a session, after the session's first, whose
//   system messages (every role "system" message, in order, compared as
//   serialized JSON) differ from the previous request's of that session, or
//   whose messages do not begin with the previous request's messages up to
//   and including that previous request's newest user message.
// - Re-read bytes of a break: when the system messages differ, the whole
//   request's prompt bytes; otherwise the bytes of the request's messages from
//   the first message that differs from the previous request's onward.
//
// The provider's side (the fake LLM reports cached tokens as a prefix cache
// does): for the orchestrator session of each run, OpenCode's own record
// (`opencode export`, export.json: each assistant message's
// tokens.cache.read) against what hookwire counted (`hookwire sessions
// --json`, sessions.json, PROTOCOL.md 4.9). Busts implied by OpenCode's
// usage: assistant messages, in order, whose cache read is fewer than the
// previous one's.

import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ownText, textOf } from "./fakellm/common.mjs";
import { check, checks, finish, readJsonl, readText } from "./lib/checks.mjs";

const argv = process.argv.slice(2);
let jsonOut;
const positional = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--json") jsonOut = argv[++i];
  else positional.push(argv[i]);
}
const work = positional[0];
if (!work) {
  console.error("usage: cache-breaks-report.mjs [--json OUT.json] WORKDIR");
  process.exit(2);
}

const MODES = [
  { key: "baseline", label: "(a) OpenCode alone, no plugin" },
  { key: "off", label: "(b) hookwire, cacheStable off" },
  { key: "stable", label: "(c) hookwire, cacheStable on" },
];
const BLOCK = "### Resumable Sessions";
const REMINDER = "<internal_reminder>";

const ser = (v) => JSON.stringify(v);
const bytes = (v) => Buffer.byteLength(ser(v), "utf8");
const sumBytes = (msgs) => msgs.reduce((a, m) => a + bytes(m), 0);
const partsOf = (content) =>
  typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];
const systemOf = (body) => body.messages.filter((m) => m.role === "system");
const lastUserIndex = (msgs) => msgs.findLastIndex((m) => m.role === "user");

/** Where two serialized values first differ, with a little context, for the report. */
function whereDiffers(a, b) {
  const sa = ser(a) ?? "(absent)";
  const sb = ser(b) ?? "(absent)";
  let i = 0;
  while (i < sa.length && i < sb.length && sa[i] === sb[i]) i++;
  const from = Math.max(0, i - 40);
  return { before: sa.slice(from, i + 60), after: sb.slice(from, i + 60) };
}

function analyse(mode) {
  const dir = join(work, mode);
  const requests = readJsonl(join(dir, "requests.jsonl")).sort((a, b) => a.n - b.n);
  const titles = requests.filter((r) => r.agent === "title");
  const analysed = requests.filter((r) => r.agent !== "title");

  const sessions = new Map(); // key -> {agent, first, requests: [...]}
  for (const r of analysed) {
    const firstUser = r.body.messages.find((m) => m.role === "user");
    const key = `${r.agent}\u0000${ownText(firstUser?.content)}`;
    if (!sessions.has(key)) sessions.set(key, { agent: r.agent, first: ownText(firstUser?.content), requests: [] });
    sessions.get(key).requests.push(r);
  }

  const breaks = [];
  let strictBreaks = 0;
  let uncachedBytes = 0;
  let toolsChanged = 0;
  let promptBytes = 0;
  for (const s of sessions.values()) {
    s.breaks = 0;
    s.rereadBytes = 0;
    s.requests.forEach((cur, idx) => {
      const cm = cur.body.messages;
      promptBytes += sumBytes(cm);
      if (idx === 0) {
        uncachedBytes += sumBytes(cm);
        return;
      }
      const prev = s.requests[idx - 1];
      const pm = prev.body.messages;
      // Bytes past the longest run of leading messages equal to the previous request's.
      let common = 0;
      while (common < pm.length && common < cm.length && ser(pm[common]) === ser(cm[common])) common++;
      uncachedBytes += sumBytes(cm.slice(common));
      if (ser(prev.body.tools) !== ser(cur.body.tools)) toolsChanged++;
      // Informational: does this request begin with the whole previous request?
      if (pm.some((m, i) => ser(m) !== ser(cm[i]))) strictBreaks++;

      let brk;
      const ps = systemOf(prev.body);
      const cs = systemOf(cur.body);
      if (ser(ps) !== ser(cs)) {
        const i = Math.max(ps.length, cs.length);
        let j = 0;
        while (j < i && ser(ps[j]) === ser(cs[j])) j++;
        brk = { kind: "system", at: j, rereadBytes: sumBytes(cm), fromFirstDifference: sumBytes(cm.slice(common)), detail: whereDiffers(ps[j], cs[j]) };
      } else {
        const upTo = lastUserIndex(pm);
        for (let i = 0; i <= upTo; i++) {
          if (ser(pm[i]) !== ser(cm[i])) {
            const r = sumBytes(cm.slice(i));
            brk = { kind: "message", at: i, role: pm[i].role, rereadBytes: r, fromFirstDifference: r, detail: whereDiffers(pm[i], cm[i]) };
            break;
          }
        }
      }
      if (brk) {
        s.breaks++;
        s.rereadBytes += brk.rereadBytes;
        breaks.push({ n: cur.n, previous: prev.n, agent: s.agent, session: s.first.slice(0, 60), ...brk });
      }
    });
  }

  // What hookwire put into the requests.
  const hasIn = (r, pred) => r.body.messages.some(pred);
  const blockInSystem = analysed.filter((r) => hasIn(r, (m) => m.role === "system" && textOf(m.content).includes(BLOCK)));
  const blockInUser = analysed.filter((r) => hasIn(r, (m) => m.role === "user" && partsOf(m.content).some((p) => p.text?.includes(BLOCK))));
  const withReminder = analysed.filter((r) => hasIn(r, (m) => m.role === "user" && partsOf(m.content).some((p) => p.text?.includes(REMINDER))));
  const lastOrch = analysed.filter((r) => r.agent === "orchestrator").at(-1);
  let injected;
  if (lastOrch) {
    const m = lastOrch.body.messages;
    const reminderParts = m.filter((x) => x.role === "user").flatMap((x) => partsOf(x.content)).filter((p) => p.text?.includes(REMINDER));
    const blockParts = m.filter((x) => x.role === "user").flatMap((x) => partsOf(x.content)).filter((p) => p.text?.includes(BLOCK));
    const blockSystem = m.filter((x) => x.role === "system" && textOf(x.content).includes(BLOCK));
    injected = {
      request: lastOrch.n,
      promptBytes: sumBytes(m),
      userMessages: m.filter((x) => x.role === "user").length,
      reminderParts: reminderParts.length,
      reminderBytes: reminderParts.reduce((a, p) => a + bytes(p), 0),
      blockParts: blockParts.length,
      blockPartBytes: blockParts.reduce((a, p) => a + bytes(p), 0),
      blockSystemBytes: sumBytes(blockSystem),
    };
  }

  // Sessions by what the scenario did, to show the resumes worked.
  const tasksOf = (agent, marker) => {
    const s = [...sessions.values()].find((x) => x.agent === agent && x.first.startsWith(marker));
    return s ? s.requests.at(-1).body.messages.filter((m) => m.role === "user").length : 0;
  };

  // Hooks the shim had to pass through (deadline, error): they spoil the measurement.
  const traces = readdirSync(existsSync(dir) ? dir : work)
    .filter((f) => /^trace-turn\d+\.jsonl$/.test(f))
    .flatMap((f) => readJsonl(join(dir, f)));
  const passedThrough = traces.filter((r) => r.ev === "reply" && !r.ok && r.method !== "initialize");
  const spawnRecords = traces.filter((r) => r.ev === "spawn");
  const spawns = spawnRecords.length;
  // The file each sidecar kept its state in, as its status said right after
  // initialize (the shim passes --project and the sidecar derives the file);
  // null for a sidecar that kept none.
  const stateFiles = [
    ...new Set(
      traces
        .filter((r) => r.ev === "inspect" && r.after === "initialize")
        .map((r) => r.status?.result?.stateFile)
        .map((f) => (f?.mode === "persistent" ? f.path : null)),
    ),
  ];
  const initialized = traces.filter((r) => r.ev === "reply" && r.method === "initialize" && r.ok).length;
  const turnRcs = readdirSync(existsSync(dir) ? dir : work)
    .filter((f) => /^turn\d+\.rc$/.test(f))
    .sort()
    .map((f) => readText(join(dir, f)).trim());
  const finals = readJsonl(join(dir, "requests.replies.jsonl"))
    .map((r) => r.answer?.text?.match(/^(TURN\d+)_DONE/)?.[1])
    .filter(Boolean);

  return {
    requests: requests.length,
    titleRequests: titles.length,
    analysedRequests: analysed.length,
    sessions: sessions.size,
    breaks: breaks.length,
    rereadBytes: breaks.reduce((a, b) => a + b.rereadBytes, 0),
    promptBytes,
    uncachedBytes,
    rereadBytesFromFirstDifference: breaks.reduce((a, b) => a + b.fromFirstDifference, 0),
    strictBreaks,
    toolsChanged,
    perSession: [...sessions.values()].map((s) => ({
      agent: s.agent,
      firstUserText: s.first.slice(0, 60),
      requests: s.requests.length,
      breaks: s.breaks,
      rereadBytes: s.rereadBytes,
    })),
    breakList: breaks,
    hookwire: {
      requestsWithBlockInSystem: blockInSystem.length,
      requestsWithBlockInUserMessage: blockInUser.length,
      requestsWithReminder: withReminder.length,
      lastOrchestratorRequest: injected,
      sidecarSpawns: spawns,
      sidecarInitialized: initialized,
      stateFiles,
      passedThrough: passedThrough.map((r) => `${r.method}:${r.reason}`),
    },
    scenario: {
      turnExitCodes: turnRcs,
      turnsDone: finals,
      explorerExpATasks: tasksOf("explorer", "EXP_A"),
      oracleOraATasks: tasksOf("oracle", "ORA_A"),
      agentSequence: analysed.map((r) => r.agent),
    },
  };
}

const runs = Object.fromEntries(MODES.map((m) => [m.key, analyse(m.key)]));

// The trade-off of cache-stable mode: the orchestrator sees the sessions list
// as it stood at the start of the user turn, not as refreshed after each
// delegation. Count the orchestrator requests (paired by position: the runs
// send the same conversation) whose newest list differs from the cacheStable-off
// mode's.
{
  const entries = (text) => (text ?? "").split("\n").filter((l) => l.startsWith("- ")).join("\n");
  const orch = (k) => readJsonl(join(work, k, "requests.jsonl")).filter((r) => r.agent === "orchestrator").sort((a, b) => a.n - b.n);
  const seenOff = orch("off").map((r) => entries(r.body.messages.filter((m) => m.role === "system").map((m) => textOf(m.content)).find((t) => t.includes(BLOCK))));
  const seenStable = orch("stable").map((r) =>
    entries(
      r.body.messages
        .filter((m) => m.role === "user")
        .flatMap((m) => partsOf(m.content))
        .map((p) => p.text ?? "")
        .filter((t) => t.includes(BLOCK))
        .at(-1),
    ),
  );
  const pairs = Math.min(seenOff.length, seenStable.length);
  const aliases = (text) => new Set(text.match(/\b[a-z0-9-]+-\d+\b/g) ?? []);
  const stale = [];
  for (let i = 0; i < pairs; i++) {
    if (seenOff[i] === seenStable[i]) continue;
    const inStable = aliases(seenStable[i]);
    const missing = [...aliases(seenOff[i])].filter((a) => !inStable.has(a));
    stale.push({ orchestratorRequest: i + 1, missingAliases: missing, off: seenOff[i], stable: seenStable[i] });
  }
  runs.stable.staleSessionsList = {
    orchestratorRequests: pairs,
    olderThanOff: stale.length,
    missingAnAlias: stale.filter((x) => x.missingAliases.length > 0).length,
    requests: stale,
  };
}

// --- the table --------------------------------------------------------------------
const rows = [["run", "requests", "(title)", "sessions", "breaks", "re-read bytes", "prompt bytes", "uncached bytes"]];
for (const m of MODES) {
  const r = runs[m.key];
  rows.push([m.label, r.requests, r.titleRequests, r.sessions, r.breaks, r.rereadBytes, r.promptBytes, r.uncachedBytes]);
}
const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => String(row[c]).length)));
const line = (row) => `| ${row.map((v, c) => (c === 0 ? String(v).padEnd(widths[c]) : String(v).padStart(widths[c]))).join(" | ")} |`;
console.log(line(rows[0]));
console.log(`|${widths.map((w, c) => (c === 0 ? "-".repeat(w + 2) : "-".repeat(w + 1) + ":")).join("|")}|`);
for (const row of rows.slice(1)) console.log(line(row));
console.log("");
for (const m of MODES) {
  const r = runs[m.key];
  for (const b of r.breakList) {
    console.log(
      `  ${m.key}: break at request #${b.n} (${b.agent}, after #${b.previous}): ${b.kind} ${b.kind === "message" ? `#${b.at} (${b.role})` : `message ${b.at}`} differs, ${b.rereadBytes} bytes re-read`,
    );
  }
  const inj = r.hookwire.lastOrchestratorRequest;
  if (inj && m.key !== "baseline")
    console.log(
      `  ${m.key}: last orchestrator request #${inj.request}: ${inj.promptBytes} prompt bytes; ${inj.reminderParts} reminder part(s) = ${inj.reminderBytes} bytes; sessions block ${inj.blockParts ? `${inj.blockParts} user part(s) = ${inj.blockPartBytes} bytes` : `in system = ${inj.blockSystemBytes} bytes`}`,
    );
}
{
  const st = runs.stable.staleSessionsList;
  console.log(
    `  stable: the orchestrator's newest sessions list differed from the off run's in ${st.olderThanOff} of ${st.orchestratorRequests} orchestrator requests (frozen per user turn); ${st.missingAnAlias} of them lacked an alias that the off run listed`,
  );
}
console.log("");

// --- the checks -----------------------------------------------------------------------
for (const m of MODES) {
  const r = runs[m.key];
  const s = r.scenario;
  check(
    `${m.key}: all four turns completed`,
    s.turnExitCodes.length === 4 && s.turnExitCodes.every((c) => c === "0") && ["TURN1", "TURN2", "TURN3", "TURN4"].every((t) => s.turnsDone.includes(t)),
    `exit codes ${s.turnExitCodes.join(",") || "none"}; finished ${s.turnsDone.join(",") || "none"}`,
  );
  check(
    `${m.key}: at least 20 LLM requests, the resumes reached the same children`,
    r.requests >= 20 && s.explorerExpATasks === 3 && s.oracleOraATasks === 2,
    `${r.requests} requests; explorer EXP_A session got ${s.explorerExpATasks} tasks (want 3), oracle ORA_A ${s.oracleOraATasks} (want 2)`,
  );
}
const seq = (k) => runs[k].scenario.agentSequence.join(",");
check(
  "the three runs sent the same conversation (same agents in the same order)",
  seq("baseline") === seq("off") && seq("off") === seq("stable"),
  `${runs.baseline.analysedRequests} / ${runs.off.analysedRequests} / ${runs.stable.analysedRequests} requests besides titles`,
);
{
  const b = runs.baseline.hookwire;
  check(
    "baseline: no plugin acted (no sessions block, no reminder, no sidecar)",
    b.requestsWithBlockInSystem + b.requestsWithBlockInUserMessage + b.requestsWithReminder === 0 && b.sidecarSpawns === 0,
    `${b.sidecarSpawns} sidecar spawns`,
  );
}
{
  const d = runs.off.hookwire;
  check(
    `off: the hooks acted (${BLOCK} in system messages, ${REMINDER} in user messages)`,
    d.requestsWithBlockInSystem > 0 && d.requestsWithReminder > 0 && d.requestsWithBlockInUserMessage === 0,
    `block in the system of ${d.requestsWithBlockInSystem} requests, in user messages of ${d.requestsWithBlockInUserMessage}; reminder in ${d.requestsWithReminder}`,
  );
}
{
  const c = runs.stable.hookwire;
  check(
    `stable: the hooks acted (${BLOCK} in user messages only, ${REMINDER} in user messages)`,
    c.requestsWithBlockInUserMessage > 0 && c.requestsWithReminder > 0 && c.requestsWithBlockInSystem === 0,
    `block in user messages of ${c.requestsWithBlockInUserMessage} requests, in the system of ${c.requestsWithBlockInSystem}; reminder in ${c.requestsWithReminder}`,
  );
}
for (const k of ["off", "stable"]) {
  const h = runs[k].hookwire;
  check(
    `${k}: every sidecar started with one state file, no hook passed through`,
    h.sidecarInitialized >= 4 && h.passedThrough.length === 0 && h.stateFiles.length === 1 && h.stateFiles[0] !== null,
    `${h.sidecarInitialized} sidecars initialized (one per turn), state ${h.stateFiles.join(", ")}; passed through: ${h.passedThrough.join(", ") || "none"}`,
  );
}
check(
  "cacheStable on breaks the cache no more often than OpenCode alone",
  runs.stable.breaks <= runs.baseline.breaks,
  `stable ${runs.stable.breaks} breaks (${runs.stable.rereadBytes} bytes re-read), baseline ${runs.baseline.breaks} (${runs.baseline.rereadBytes}), off ${runs.off.breaks} (${runs.off.rereadBytes})`,
);

// --- the provider's side: OpenCode's usage against hookwire's cache figures --------------
function usageOf(key) {
  const dir = join(work, key);
  const session = readText(join(dir, "session")).trim();
  const exported = existsSync(join(dir, "export.json")) ? JSON.parse(readText(join(dir, "export.json"))) : { messages: [] };
  const reads = (exported.messages ?? [])
    .filter((m) => m.info?.role === "assistant" && m.info?.tokens)
    .map((m) => m.info.tokens.cache?.read ?? 0);
  let implied = 0;
  for (let i = 1; i < reads.length; i++) if (reads[i] < reads[i - 1]) implied++;
  const out = { session, assistantMessages: reads.length, cacheReadSum: reads.reduce((a, b) => a + b, 0), impliedBusts: implied, reads };
  if (key === "baseline") return out;
  const listed = existsSync(join(dir, "sessions.json")) ? JSON.parse(readText(join(dir, "sessions.json"))) : {};
  out.hookwire = (listed.cache ?? []).find((c) => c.session === session) ?? null;
  return out;
}
const usage = Object.fromEntries(MODES.map((m) => [m.key, usageOf(m.key)]));
for (const m of MODES) {
  const u = usage[m.key];
  const h = u.hookwire;
  console.log(
    `  ${m.key}: orchestrator usage (opencode export): ${u.assistantMessages} assistant messages, cache read ${u.cacheReadSum} tokens, ${u.impliedBusts} busts implied` +
      (h ? `; hookwire: ${h.requests} requests, cache read ${h.cacheReadTokens}, ${h.busts.length} busts (${h.busts.map((b) => `${b.cause}${b.byHookwire ? "/hookwire" : ""}`).join(", ") || "none"})` : ""),
  );
}
for (const k of ["off", "stable"]) {
  const u = usage[k];
  const h = u.hookwire;
  check(
    `${k}: hookwire sessions --json lists the orchestrator session, top level, with every request and the cache-read total OpenCode recorded`,
    h !== null && h.parent === null && h.agent === "orchestrator" && h.requests === u.assistantMessages && h.cacheReadTokens === u.cacheReadSum,
    h ? `${h.requests} requests (OpenCode: ${u.assistantMessages}), cache read ${h.cacheReadTokens} (OpenCode: ${u.cacheReadSum}), parent ${h.parent}, agent ${h.agent}` : `no entry for ${u.session}`,
  );
  check(
    `${k}: hookwire's busts are the ones OpenCode's usage implies`,
    h !== null && h.busts.length === u.impliedBusts,
    `${h?.busts.length ?? "?"} busts, ${u.impliedBusts} implied by the cache reads ${u.reads.join(",")}`,
  );
}
check(
  "off: the cached prefix shrank, and each bust is attributed to hookwire's own change (at least one in the system prompt)",
  usage.off.impliedBusts > 0 && usage.off.hookwire?.busts.every((b) => b.byHookwire) && usage.off.hookwire?.busts.some((b) => b.cause === "system"),
  (usage.off.hookwire?.busts ?? []).map((b) => `${b.cause}${b.byHookwire ? " (hookwire)" : ""}: ${b.detail}`).join("; ") || "no busts",
);
check("stable: no bust", usage.stable.impliedBusts === 0 && usage.stable.hookwire?.busts.length === 0, `${usage.stable.impliedBusts} implied`);

if (jsonOut) {
  writeFileSync(
    jsonOut,
    JSON.stringify(
      {
        opencode: "1.18.33",
        scenario: "scripts/fakellm/cache-scenario.mjs",
        definitions: {
          session: "agent (AGENT_MARKER in the system prompt) + the user's own text of the first user message; title-generation requests excluded",
          messageBytes: "UTF-8 length of JSON.stringify(message); prompt bytes = sum over body.messages",
          cacheBreak:
            "a session's request after its first whose system messages differ from the previous request's, or whose messages do not begin with the previous request's messages up to and including its newest user message",
          rereadBytes: "system differs: the whole request's prompt bytes; else the bytes of the messages from the first differing one onward",
          uncachedBytes:
            "informational: per request, the bytes after the longest run of leading messages equal to the previous request's of its session (the whole request for a session's first); summed",
          rereadBytesFromFirstDifference: "informational: re-read bytes counted from the first differing message even when it is a system message",
          strictBreaks: "informational: requests that do not begin with the whole previous request of their session",
        },
        table: MODES.map((m) => ({
          run: m.key,
          label: m.label,
          requests: runs[m.key].requests,
          titleRequests: runs[m.key].titleRequests,
          sessions: runs[m.key].sessions,
          breaks: runs[m.key].breaks,
          rereadBytes: runs[m.key].rereadBytes,
          promptBytes: runs[m.key].promptBytes,
          uncachedBytes: runs[m.key].uncachedBytes,
        })),
        runs,
        usage,
        checks,
        passed: checks.every((c) => c.ok),
      },
      null,
      2,
    ) + "\n",
  );
  console.log(`JSON: ${jsonOut}`);
}
finish("cache-breaks");
