// The pure parts: reading sessions.list entries, grouping them for the
// tree, and the text of each line and of the status-bar item.
import assert from "node:assert/strict";
import { test } from "node:test";
import entries from "../dist/entries.js";
import app from "../dist/app.js";

const { readEntry, readEntries, groupEntries, mergeEntries, formatAge, entryDescription, entryTooltip, runIcon } = entries;
const { statusBarState, openCommand } = app;

const NOW = new Date("2026-12-01T12:00:00Z");
const ago = (s) => new Date(NOW.getTime() - s * 1000).toISOString();

test("readEntry reads the sidecar's names and the observer protocol's", () => {
  const rows = [
    {
      name: "sidecar names (parent, lastUse), run and model",
      raw: { parent: "ses_P", agent: "explorer", alias: "exp-1", taskId: "ses_C", label: "Map", lastUse: "2026-12-01T10:00:00.123456789Z", run: { state: "error", error: "boom" }, model: { model: "anthropic/claude", variant: "high", rung: "fallback-chain" } },
      want: { parent: "ses_P", agent: "explorer", alias: "exp-1", taskId: "ses_C", label: "Map", lastUse: new Date("2026-12-01T10:00:00.123Z"), run: { state: "error", error: "boom" }, model: { model: "anthropic/claude", variant: "high", rung: "fallback-chain" }, project: "/w" },
    },
    {
      name: "protocol names (parentSessionID, lastUsed)",
      raw: { parentSessionID: "ses_P", agent: "oracle", alias: "ora-1", taskId: "ses_C", label: "Ask", lastUsed: "2026-12-01T10:00:00Z", run: { state: "running" } },
      want: { parent: "ses_P", agent: "oracle", alias: "ora-1", taskId: "ses_C", label: "Ask", lastUse: new Date("2026-12-01T10:00:00Z"), run: { state: "running" }, project: "/w" },
    },
    {
      name: "Go's zero time is no time; an empty error is left out",
      raw: { parent: "ses_P", agent: "a", alias: "a-1", taskId: "ses_C", label: "", lastUse: "0001-01-01T00:00:00Z", run: { state: "completed", error: "" } },
      want: { parent: "ses_P", agent: "a", alias: "a-1", taskId: "ses_C", label: "", run: { state: "completed" }, project: "/w" },
    },
    {
      name: "model switches (runtime fallback); a malformed one is left out",
      raw: { parent: "ses_P", agent: "explorer", alias: "exp-1", taskId: "ses_C", label: "", switches: [{ from: "f/m3", to: "f/m2", reason: "rate-limit: slow", at: "2026-12-01T10:00:00Z" }, { from: "f/m3" }, 5] },
      want: { parent: "ses_P", agent: "explorer", alias: "exp-1", taskId: "ses_C", label: "", switches: [{ from: "f/m3", to: "f/m2", reason: "rate-limit: slow", at: new Date("2026-12-01T10:00:00Z") }], project: "/w" },
    },
    { name: "no task id", raw: { parent: "ses_P", agent: "a", alias: "a-1" }, want: undefined },
    { name: "no alias", raw: { parent: "ses_P", agent: "a", taskId: "ses_C" }, want: undefined },
    { name: "not an object", raw: "exp-1", want: undefined },
  ];
  for (const r of rows) assert.deepEqual(readEntry(r.raw, "/w"), r.want, r.name);
});

test("readEntries skips what it cannot read and treats a non-array as empty", () => {
  assert.deepEqual(readEntries(null, "/w"), []);
  assert.deepEqual(readEntries({ entries: [] }, "/w"), []);
  const got = readEntries([{ parent: "p", agent: "a", alias: "a-1", taskId: "t1" }, 7, { alias: "x" }], "/w");
  assert.deepEqual(got.map((e) => e.taskId), ["t1"]);
});

const e = (parent, agent, alias, secondsAgo, extra = {}) => ({ parent, agent, alias, taskId: `ses_${alias}`, label: `${alias} label`, lastUse: new Date(ago(secondsAgo)), project: "/w", ...extra });

test("groupEntries: parents, then agents, then entries, each most recently used first", () => {
  const groups = groupEntries([
    e("ses_A", "explorer", "exp-1", 300),
    e("ses_B", "oracle", "ora-1", 30),
    e("ses_A", "oracle", "ora-1", 100),
    e("ses_A", "explorer", "exp-2", 50),
  ]);
  const shape = groups.map((p) => [p.parent, p.count, p.agents.map((a) => [a.agent, a.entries.map((x) => x.alias)])]);
  assert.deepEqual(shape, [
    ["ses_B", 1, [["oracle", ["ora-1"]]]],
    ["ses_A", 3, [["explorer", ["exp-2", "exp-1"]], ["oracle", ["ora-1"]]]],
  ]);
  assert.equal(groups[1].lastUse.toISOString(), ago(50));
});

test("mergeEntries keeps an entry two folders of one repository both report once", () => {
  const a = e("ses_A", "explorer", "exp-1", 1);
  const merged = mergeEntries([[a, e("ses_A", "explorer", "exp-2", 2)], [{ ...a, project: "/w/sub" }]]);
  assert.deepEqual(merged.map((x) => [x.alias, x.project]), [["exp-1", "/w"], ["exp-2", "/w"]]);
});

test("formatAge", () => {
  const rows = [[undefined, ""], [0, "now"], [4, "now"], [42, "42s"], [60, "1m"], [3599, "59m"], [3600, "1h"], [86399, "23h"], [86400 * 3, "3d"]];
  for (const [s, want] of rows) assert.equal(formatAge(s === undefined ? undefined : new Date(ago(s)), NOW), want, `${s}s`);
});

test("entryDescription: label · model · run state · age, blanks left out", () => {
  const rows = [
    { name: "everything", entry: e("p", "a", "a-1", 120, { model: { model: "openai/gpt-5", variant: "high" }, run: { state: "error", error: "x" } }), want: "a-1 label · openai/gpt-5 (high) · error · 2m" },
    { name: "no model", entry: e("p", "a", "a-1", 10, { run: { state: "completed" } }), want: "a-1 label · completed · 10s" },
    { name: "switched model", entry: e("p", "a", "a-1", 10, { model: { model: "f/m2" }, switches: [{ from: "f/m3", to: "f/m2", reason: "r" }] }), want: "a-1 label · f/m2 (from f/m3) · 10s" },
    { name: "nothing but the label", entry: { ...e("p", "a", "a-1", 0), lastUse: undefined }, want: "a-1 label" },
  ];
  for (const r of rows) assert.equal(entryDescription(r.entry, NOW), r.want, r.name);
});

test("entryTooltip names the session, the parent, the model's rung and the error", () => {
  const t = entryTooltip(e("ses_P", "explorer", "exp-1", 0, { model: { model: "m/x", rung: "user" }, run: { state: "error", error: "rate limited" } }));
  assert.match(t, /^exp-1: exp-1 label$/m);
  assert.match(t, /^session: ses_exp-1$/m);
  assert.match(t, /^parent: ses_P$/m);
  assert.match(t, /^model: m\/x \(decided by user\)$/m);
  assert.match(t, /^last run: error: rate limited$/m);
  const sw = entryTooltip(e("p", "a", "a-1", 0, { switches: [{ from: "f/m3", to: "f/m2", reason: "rate-limit: slow", at: new Date("2026-12-01T10:00:00Z") }] }));
  assert.match(sw, /^switched: f\/m3 → f\/m2 at 2026-12-01T10:00:00.000Z \(rate-limit: slow\)$/m);
});

test("runIcon", () => {
  assert.deepEqual(
    [undefined, { state: "running" }, { state: "completed" }, { state: "error" }, { state: "later" }].map(runIcon),
    ["circle-outline", "sync", "pass", "error", "circle-outline"],
  );
});

test("statusBarState", () => {
  const ready = { name: "w", state: "ready", error: "", pid: 42 };
  const rows = [
    { name: "no folder: hidden", count: 0, folders: [], want: undefined },
    { name: "starting", count: 0, folders: [{ ...ready, state: "starting", pid: undefined }], want: "hookwire: starting…" },
    { name: "ready", count: 3, folders: [ready], want: "hookwire: 3 resumable" },
    { name: "ready, none", count: 0, folders: [ready], want: "hookwire: 0 resumable" },
    { name: "one folder down", count: 1, folders: [ready, { name: "v", state: "restarting", error: "exited on SIGKILL" }], want: "hookwire: 1 resumable $(warning)" },
  ];
  for (const r of rows) assert.equal(statusBarState(r.count, r.folders)?.text, r.want, r.name);
  const tip = statusBarState(1, [ready, { name: "v", state: "restarting", error: "exited on SIGKILL" }]).tooltip;
  assert.equal(tip, "w: observing (pid 42)\nv: restarting: exited on SIGKILL\nClick for the observer's status.");
});

test("openCommand quotes only what needs it", () => {
  assert.equal(openCommand("opencode", "ses_abc123"), "opencode --session ses_abc123");
  assert.equal(openCommand("/opt/my tools/opencode", "ses_x'y"), "'/opt/my tools/opencode' --session 'ses_x'\\''y'");
});

test("prompt cache: status.cache.perSession read by session, a share and a bust marker per line", () => {
  const { readCache, cacheText, cacheTooltip, parentDescription } = entries;
  const status = {
    cache: {
      perSession: [
        { session: "ses_P", agent: "orchestrator", requests: 11, cacheShare: 0.831, busts: 5, bustsInARow: 2, lastBust: { message: "m", tokensLost: 564, cause: "system", byHookwire: true, detail: "system prompt changed by hookwire (its Resumable Sessions block)" } },
        { session: "ses_C", parent: "ses_P", requests: 2, cacheShare: 0.5, busts: 1, bustsInARow: 0, lastBust: { cause: "unknown" } },
        { session: "ses_Q", requests: 3, cacheShare: 0.95, busts: 0, bustsInARow: 0 },
        { session: "ses_N", requests: 0, cacheShare: 0, busts: 0, bustsInARow: 0 },
        { session: "ses_F", requests: 3, cacheShare: null, noCacheFigures: true, busts: 0, bustsInARow: 0 },
        { session: "ses_Z", requests: 1, cacheShare: 0, busts: 0, bustsInARow: 0 },
        { session: "ses_A", requests: 4, cacheShare: 4368 / 4380, busts: 0, bustsInARow: 0 },
        { session: "", requests: 1 },
        { requests: 1 },
        "junk",
      ],
    },
  };
  const c = readCache(status);
  assert.deepEqual([...c.keys()], ["ses_P", "ses_C", "ses_Q", "ses_N", "ses_F", "ses_Z", "ses_A"]);
  const rows = [
    ["two busts in a row: a double marker", "ses_P", "83% cached ⚠⚠5"],
    ["a bust, not in a row", "ses_C", "50% cached ⚠1"],
    ["no bust: the share only", "ses_Q", "95% cached"],
    ["no request yet: nothing", "ses_N", ""],
    ["the provider reports no cache figures: said, never 0%", "ses_F", "no cache figures"],
    ["a real 0% (writes, no reads): the share", "ses_Z", "0% cached"],
    ["unknown session: nothing", "ses_X", ""],
    ["short of all: never 100%", "ses_A", "99% cached"],
  ];
  for (const [name, session, want] of rows) assert.equal(cacheText(c.get(session)), want, name);
  assert.deepEqual(cacheTooltip(c.get("ses_P")), [
    "prompt cache: 83% of prompt tokens read from cache over 11 requests; 5 busts",
    "last bust: system (hookwire): system prompt changed by hookwire (its Resumable Sessions block)",
  ]);
  assert.deepEqual(cacheTooltip(c.get("ses_F")), ["prompt cache: the provider reported no cache figures over 3 requests (every cache read and write was 0)"]);
  assert.equal(parentDescription({ parent: "ses_P", project: "/w", agents: [], count: 2, lastUse: new Date(NOW.getTime() - 120_000) }, NOW, c.get("ses_P")), "2 sessions · 83% cached ⚠⚠5 · 2m");
  assert.equal(entryDescription({ parent: "ses_P", agent: "explorer", alias: "exp-1", taskId: "ses_C", label: "Map", project: "/w" }, NOW, c.get("ses_C")), "Map · 50% cached ⚠1");
  for (const bad of [null, {}, { cache: null }, { cache: { perSession: "x" } }]) assert.equal(readCache(bad).size, 0);
});

test("subagents.list's figures (PROTOCOL.md 4.10): each subagent's state, tokens and cost beside its alias; the parent's own and total", () => {
  const { readSubagents, subagentText, parentFiguresText, tokensText } = entries;
  const result = {
    parent: { sessionID: "ses_P", own: { tokens: { input: 10, output: 5 }, cost: 0.0002 }, total: { tokens: { input: 1130, output: 45, cacheRead: 800 }, cost: 0.0456 }, subagents: 2, running: 1 },
    subagents: [
      { sessionID: "ses_C", parentID: "ses_P", depth: 1, state: "retrying", retry: { attempt: 2, message: "Rate limit" }, model: "fake/m2", tokens: { input: 1120, output: 40, cacheRead: 800 }, cost: 0.0031 },
      { sessionID: "ses_D", parentID: "ses_P", depth: 1, state: "failed", error: "rate limit: slow down", tokens: {}, cost: 0 },
      { sessionID: 7, state: "done" },
    ],
  };
  const r = readSubagents(result);
  assert.equal(r.rows.size, 2);
  assert.equal(subagentText(r.rows.get("ses_C")), "retrying (attempt 2) · 2.0k tok · $0.0031");
  assert.equal(subagentText(r.rows.get("ses_D")), "failed");
  assert.equal(r.rows.get("ses_D").error, "rate limit: slow down");
  assert.equal(parentFiguresText(r.parent), "total $0.0456 with subagents (own $0.0002) · 1 running");
  assert.equal(tokensText(950), "950 tok");
  assert.equal(tokensText(123456), "123k tok");
  assert.deepEqual(readSubagents(null), { rows: new Map() });

  const e = readEntry({ parent: "ses_P", agent: "explorer", alias: "exp-1", taskId: "ses_C", label: "Map", lastUse: ago(30), run: { state: "running" } }, "/w");
  assert.equal(entryDescription(e, NOW, undefined, r.rows.get("ses_C")), "Map · fake/m2 · retrying (attempt 2) · 2.0k tok · $0.0031 · 30s");
  assert.equal(entryDescription(e, NOW), "Map · running · 30s", "without figures: the run state");
  assert.equal(runIcon({ state: "cancelled" }), "debug-stop");
  assert.equal(runIcon({ state: "done" }), "pass");
});

test("a parent with no subagent records shows no figures (its own alone is not a total with subagents)", () => {
  const { readSubagents, parentFiguresText } = entries;
  assert.equal(parentFiguresText(readSubagents({ parent: { sessionID: "ses_P", own: { tokens: { input: 5 }, cost: 0.1 }, total: { tokens: { input: 5 }, cost: 0.1 }, subagents: 0, running: 0 }, subagents: [] }).parent), "");
});
