// The TUI section's lines (tuimodel.ts) for each state it can be in, and
// the text that reaches the screen (tuitext.ts): made safe, cut by display
// width without splitting a grapheme cluster.
import assert from "node:assert/strict";
import { test } from "node:test";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { shimDir } from "./helpers.mjs";

const model = await import(pathToFileURL(join(shimDir, "dist", "tuimodel.js")).href);
const text = await import(pathToFileURL(join(shimDir, "dist", "tuitext.js")).href);
const { sectionLines, fit, stateWord, cacheWords, newSwitches, rowOfEntry, switchClass, needsClock, MAX_SEEN_SWITCHES, MAX_LINES, SIDEBAR_WIDTH } = model;
const { safeText, displayWidth, cutToWidth, clusterWidth } = text;

const NOW = Date.UTC(2026, 11, 6, 1, 0, 42);
const iso = (s) => new Date(Date.UTC(2026, 11, 6, 1, 0, s)).toISOString();
const ready = { kind: "ready", version: "1.4.0", lastLoad: "ok" };
const base = { observer: ready, sessionID: "ses_p", cache: new Map(), warnings: [], now: NOW };
const T = (input, output, cacheRead = 0) => ({ input, output, reasoning: 0, cacheRead, cacheWrite: 0 });
const exp1 = {
  sessionID: "ses_c1", parentID: "ses_p", depth: 1, alias: "exp-1", resumable: true, agent: "explore", label: "Map the config loader",
  state: "done", startedAt: iso(0), endedAt: iso(30), model: "fake/fallback-model", tokens: T(120, 40, 800), cost: 0.0031,
  context: { used: 960, limit: 128000 }, cacheShare: 0.87,
  switches: [{ from: "fake/primary-model", to: "fake/fallback-model", class: "rate-limit", at: iso(5) }],
};
const gen1 = { sessionID: "ses_c2", parentID: "ses_p", depth: 1, alias: "gen-1", resumable: true, agent: "general", label: "Summarise", state: "running", startedAt: iso(0), tokens: T(10, 2), cost: 0 };
const page = (rows, parent) => ({ parent, subagents: rows });

test("each state of hookwire's own line: idle or how many run, never working when nothing runs", () => {
  const head = (observer, extra = {}) => sectionLines({ ...base, observer, ...extra })[0];
  assert.equal(head({ kind: "starting" }), "hookwire: starting");
  assert.equal(head({ kind: "off", why: "no hookwire binary" }), "hookwire: off (no hookwire binary)");
  assert.equal(head({ kind: "gone", why: "observer gone" }), "hookwire: down (observer gone)");
  assert.equal(head(ready), "hookwire 1.4.0: idle");
  assert.equal(head(ready, { page: page([exp1]) }), "hookwire 1.4.0: idle", "a finished subagent is not work");
  assert.equal(head(ready, { page: page([gen1, exp1]) }), "hookwire 1.4.0: 1 running");
  assert.equal(head(ready, { page: page([exp1], { subagents: 9, running: 3 }) }), "hookwire 1.4.0: 3 running", "the parent's count over the page's");
  assert.equal(head(ready, { stateProblem: "memory only" }), "hookwire 1.4.0: memory only");
  assert.equal(head({ ...ready, lastLoad: "corrupt: bad" }), "hookwire 1.4.0: state corrupt: bad");
  assert.equal(head({ ...ready, version: "1.4.0+gabc123.dirty" }), "hookwire 1.4.0: idle", "a development build's suffix is left out");
});

test("the parent's view: its own and total figures labelled, each row begins with its state mark, details for the first four", () => {
  const parent = { sessionID: "ses_p", own: { tokens: T(1000, 200), cost: 0.0123 }, total: { tokens: T(5000, 900, 4000), cost: 0.0456 }, subagents: 2, running: 1 };
  const lines = sectionLines({ ...base, page: page([gen1, exp1], parent) });
  assert.deepEqual(lines, [
    "hookwire 1.4.0: 1 running",
    "this session $0.0123 1.2k tok",
    "with subagents $0.0456 9.9k tok",
    "subagents (2):",
    " ~ gen-1 general running 42s",
    "   Summarise",
    "   12 tok $0",
    " ✓ exp-1 explore done 30s",
    "   Map the config loader",
    "   fallback-model 960 tok $0.0031",
    "   ctx 960/128k cache 87%",
    "   ↪ from primary-model: rate-limit",
  ]);
  assert.deepEqual(sectionLines(base).slice(1), ["no subagents yet"]);
  // The session's own cache share under its own figures; a subagent with no figures yet shows none.
  const cache = new Map([["ses_p", { session: "ses_p", requests: 4, cacheShare: 0.912, busts: 0 }]]);
  const fresh = { ...gen1, tokens: T(0, 0), cost: 0, label: "" };
  assert.deepEqual(sectionLines({ ...base, cache, page: page([fresh], { ...parent, subagents: 1 }) }).slice(1, 6), [
    "this session $0.0123 1.2k tok",
    "  cache 91%",
    "with subagents $0.0456 9.9k tok",
    "subagents (1):",
    " ~ gen-1 general running 42s",
  ]);
  assert.equal(sectionLines({ ...base, cache, page: page([fresh], { ...parent, subagents: 1 }) }).length, 6, "no figures line");
  assert.deepEqual(sectionLines({ ...base, cache }).slice(1), ["this session cache 91%", "no subagents yet"]);
});

test("every state: running with its time, retrying with its attempt, done, failed with its reason, cancelled, interrupted; a mark on an alias no longer resumable", () => {
  const row = (extra) => ({ ...gen1, label: "", tokens: undefined, cost: undefined, ...extra });
  const first = (r) => sectionLines({ ...base, page: page([r]) })[2];
  assert.equal(first(row({ startedAt: iso(-65) })), " ~ gen-1 general running 1m47s");
  assert.equal(first(row({ state: "retrying", retry: { attempt: 2, next: iso(51), message: "Rate limit" } })), " ↻ gen-1 general retrying #2 in 9s");
  assert.equal(first(row({ state: "done", endedAt: iso(3) })), " ✓ gen-1 general done 3s");
  assert.equal(first(row({ state: "failed", error: "rate limit: Rate limit reached for fake-model-3" })), " ✗ gen-1 general failed: rate limit…");
  assert.equal(first(row({ state: "cancelled" })), " - gen-1 general cancelled");
  assert.equal(first(row({ state: "interrupted" })), " - gen-1 general interrupted");
  assert.equal(first(row({ state: "done", endedAt: undefined, resumable: false })), " ✓ gen-1* general done");
  assert.equal(first(row({ state: "running", alias: undefined, resumable: false })), " ~ general running 42s", "no alias yet: the agent");
  assert.equal(stateWord({ state: "completed" }), "done");
  assert.equal(stateWord(undefined), "idle");
  assert.equal(needsClock(page([exp1])), false, "nothing moves: no clock");
  assert.equal(needsClock(page([gen1])), true);
});

test("six subagents are all listed: the first four with details where the lines allow, the rest one line each", () => {
  const rows = Array.from({ length: 6 }, (_, i) => ({ ...exp1, sessionID: `ses_${i}`, alias: `exp-${i + 1}`, label: `Task ${i + 1}` }));
  const lines = sectionLines({ ...base, page: page(rows, { subagents: 6, running: 0 }) });
  assert.ok(lines.length <= MAX_LINES);
  for (let i = 1; i <= 6; i++) assert.ok(lines.some((l) => l.startsWith(` ✓ exp-${i} explore done`)), `exp-${i} listed`);
  assert.ok(lines.includes(" ✓ exp-6 explore done Task 6"), "past four: one line with the label");
  assert.ok(!lines.some((l) => l.includes("more")), "nothing left out");
});

test("5,000 subagents: the lines built and the rows looked at stay what is shown", () => {
  let touched = 0;
  const rows = Array.from({ length: 5000 }, (_, i) => ({ ...exp1, sessionID: `ses_${i}`, alias: `exp-${i + 1}` }));
  const counted = new Proxy(rows, {
    get(target, key, recv) {
      if (typeof key === "string" && /^\d+$/.test(key)) touched++;
      return Reflect.get(target, key, recv);
    },
  });
  const lines = sectionLines({ ...base, page: { parent: { subagents: 5000, running: 0 }, subagents: counted } });
  assert.ok(lines.length <= MAX_LINES, `${lines.length} lines`);
  assert.ok(touched <= MAX_LINES * 2, `${touched} rows looked at`);
  assert.match(lines.at(-1), /^ \+\d+ more: ctrl\+p "hookwire"$/);
  const listed = lines.filter((l) => l.startsWith(" ✓")).length;
  assert.equal(Number(lines.at(-1).match(/\+(\d+)/)[1]), 5000 - listed, "the rest counted, not drawn");
  assert.equal(needsClock(counted), false);
});

test("a child's view: its alias, agent, state, figures, switches and parent", () => {
  const lines = sectionLines({ ...base, sessionID: "ses_c1", parentID: "ses_p", page: page([gen1, exp1]) });
  assert.deepEqual(lines, [
    "hookwire 1.4.0: 1 running",
    "subagent exp-1 (explore)",
    " ✓ done 30s",
    "   Map the config loader",
    "   fallback-model 960 tok $0.0031",
    "   ctx 960/128k cache 87%",
    "   ↪ from primary-model: rate-limit",
    "parent ses_p",
  ]);
  assert.deepEqual(sectionLines({ ...base, sessionID: "ses_x", parentID: "ses_p", page: page([exp1]) }).slice(1), ["subagent (not listed yet)", "parent ses_p"]);
});

test("context: used against the window the sidecar gives, else the one OpenCode's TUI knows for the row's model, else used alone", () => {
  const row = { ...exp1, switches: [], cacheShare: undefined, context: { used: 15 } };
  const ctx = (extra) => sectionLines({ ...base, page: page([row]), ...extra }).find((l) => l.includes("ctx"));
  assert.equal(ctx({}), "   ctx 15", "no window known: used alone");
  const asked = [];
  const limits = (m) => (asked.push(m), m === "fake/fallback-model" ? 128000 : undefined);
  assert.equal(ctx({ contextLimit: limits }), "   ctx 15/128k", "the TUI's window for the row's model");
  assert.deepEqual(asked, ["fake/fallback-model"]);
  assert.equal(sectionLines({ ...base, page: page([{ ...row, context: { used: 15, limit: 200000 } }]), contextLimit: limits }).find((l) => l.includes("ctx")), "   ctx 15/200k", "the sidecar's window first");
  assert.equal(ctx({ contextLimit: () => { throw new Error("state gone"); } }), "   ctx 15", "a lookup that throws knows none");
  for (const bad of [0, -1, NaN, Infinity, "128000", null]) assert.equal(ctx({ contextLimit: () => bad }), "   ctx 15", `window ${String(bad)} is none`);
  // A child's own view too.
  assert.ok(sectionLines({ ...base, sessionID: "ses_c1", parentID: "ses_p", page: page([row]), contextLimit: limits }).includes("   ctx 15/128k"));
});

test("a switch is drawn once with its failure's class, never a cooling-until reason", () => {
  // An older sidecar's two records of one 429: the second a cooling-until.
  const entry = {
    parent: "ses_p", agent: "explore", alias: "exp-1", taskId: "ses_c1", label: "x", run: { state: "completed" },
    switches: [
      { from: "fake/fake-model-3", to: "fake/fake-model-2", reason: "rate-limit: Rate limit reached for fake-model-3", at: iso(1) },
      { from: "fake/fake-model-3", to: "fake/fake-model-2", reason: "cooling until 2026-12-06T01:29:14Z (rate-limit: Rate limit reached)", at: iso(2) },
    ],
  };
  const row = rowOfEntry(entry);
  assert.equal(row.switches.length, 1);
  assert.equal(row.state, "done");
  const lines = sectionLines({ ...base, page: page([row]) });
  assert.deepEqual(lines.filter((l) => l.includes("↪")), ["   ↪ from fake-model-3: rate-limit"]);
  assert.ok(!lines.some((l) => /cooling/.test(l)));
  assert.equal(switchClass({ reason: "cooling until 2026-12-06T01:29:14Z (rate-limit: x)" }), "rate-limit");
  assert.equal(switchClass({ reason: "cooling until 2026-12-06T01:29:14Z" }), "");
  assert.equal(rowOfEntry({ ...entry, run: { state: "error", error: "Task cancelled" } }).state, "cancelled");
  assert.equal(rowOfEntry({ ...entry, run: { state: "error", error: "boom" } }).state, "failed");
});

test("a pending switch (asked for, not seen applied) never shows the subagent on the fallback", () => {
  const pendingSwitch = { ...exp1.switches[0], pending: true };
  const pending = { ...exp1, state: "retrying", endedAt: undefined, model: "fake/primary-model", switches: [pendingSwitch] };
  const parent = sectionLines({ ...base, page: page([pending]) });
  assert.ok(parent.some((l) => l.startsWith("   ↪ switching to fallback-model")), parent.join("\n"));
  assert.ok(!parent.some((l) => l.includes("from primary-model")), parent.join("\n"));
  assert.ok(parent.some((l) => l.includes("primary-model") && !l.includes("↪")), "the model it still runs on");
  // An older observer's entry: its pending switch does not make the fallback its model.
  const row = rowOfEntry({ parent: "ses_p", alias: "exp-1", taskId: "ses_c1", model: { model: "fake/primary-model" },
    switches: [{ from: "fake/primary-model", to: "fake/fallback-model", reason: "rate-limit: Rate limit reached", at: iso(5), pending: true }] });
  assert.equal(row.model, "fake/primary-model");
  assert.equal(row.switches[0].pending, true);
  // Toasted as switching, and once more when it applied.
  const seen = new Set();
  assert.deepEqual(newSwitches(seen, [pending], false), ["exp-1: fake/primary-model failed (rate-limit); switching to fake/fallback-model"]);
  assert.deepEqual(newSwitches(seen, [pending], false), []);
  const applied = { ...pending, switches: [{ ...pendingSwitch, pending: undefined }] };
  assert.deepEqual(newSwitches(seen, [applied], false), ["exp-1: fake/primary-model failed (rate-limit); now on fake/fallback-model"]);
});

test("start-up warnings are shown while they last, the newest three, cut to the width", () => {
  const warnings = ['hookwire: cacheStabel: unknown option, ignored (did you mean "cacheStable"?)', "hookwire: HOOKWIRE_OPTIONS is not JSON"];
  const lines = sectionLines({ ...base, observer: { kind: "starting" }, warnings });
  assert.equal(lines[1], "! 2 warnings:");
  assert.equal(lines[2], "  cacheStabel: unknown option, igno…");
  assert.equal(lines[3], "  HOOKWIRE_OPTIONS is not JSON");
});

test("the small pieces: fit, cache words, share percentages", () => {
  assert.equal(fit("x".repeat(36)), "x".repeat(36));
  assert.equal(fit("x".repeat(37)), "x".repeat(35) + "…");
  assert.equal(cacheWords(undefined), "");
  assert.equal(cacheWords({ requests: 2, cacheShare: null, noCacheFigures: true, busts: 2 }), "cache n/a 2 busts");
  assert.equal(model.sharePercent(4368 / 4380), 99);
  assert.equal(model.sharePercent(0.001), 1);
  assert.equal(model.tokenWords(128000), "128k");
  assert.equal(model.tokenWords(1250000), "1.3M");
  assert.equal(model.costWords(0.0456), "$0.0456");
  assert.equal(model.costWords(1.5), "$1.50");
});

// --- safe text -----------------------------------------------------------------

const FAMILY = "👨‍👩‍👧‍👦";
const FLAG = "🇯🇵";
const HOSTILE = [
  ["OSC 52 clipboard write", "a\x1b]52;c;ZWNobyBwd25lZA==\x07b", "ab"],
  ["OSC 52 with ST", "a\x1b]52;c;ZWNobw==\x1b\\b", "ab"],
  ["clear screen", "a\x1b[2Jb", "ab"],
  ["SGR colour", "\x1b[31mred\x1b[0m", "red"],
  ["cursor move", "x\x1b[10;10Hy", "xy"],
  ["C1 CSI", "a\x9b2Jb", "ab"],
  ["C1 OSC", "a\x9d0;title\x07b", "ab"],
  ["unterminated OSC", "a\x1b]0;title", "a"],
  ["title set", "a\x1b]0;pwned\x1b\\b", "ab"],
  ["DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"],
  ["bare ESC", "a\x1bb", "a"],
  ["BEL and backspace", "a\x07\x08b", "ab"],
  ["NUL", "a\x00b", "ab"],
  ["DEL", "a\x7fb", "ab"],
  ["newline and tab", "a\nb\tc\r", "a b c "],
  ["RLO", "abc\u202Egnp.exe", "abcgnp.exe"],
  ["LRI/PDI isolate", "a\u2066b\u2069c", "abc"],
  ["LRM/RLM", "a\u200eb\u200fc", "abc"],
  ["zero width space", "a\u200bb", "ab"],
  ["BOM", "\ufeffab", "ab"],
  ["word joiner", "a\u2060b", "ab"],
  ["soft hyphen", "a\u00adb", "ab"],
  ["lone ZWJ", "a\u200db", "ab"],
  ["line separator", "a\u2028b", "a b"],
  ["tag smuggling", "a\u{E0041}\u{E0042}b", "ab"],
  ["lone surrogate", "a\ud800b", "a\ufffdb"],
  ["emoji family kept whole", `x${FAMILY}y`, `x${FAMILY}y`],
  ["flag kept", `x${FLAG}y`, `x${FLAG}y`],
  ["keycap kept", "1\ufe0f\u20e3", "1\ufe0f\u20e3"],
  ["CJK kept", "日本語", "日本語"],
  ["combining accent kept", "e\u0301", "e\u0301"],
];

test("safe text: escape sequences, controls, bidi controls and invisible characters never reach the screen; emoji joiners stay", () => {
  for (const [name, input, want] of HOSTILE) assert.equal(safeText(input), want, name);
  assert.equal(safeText(undefined), "");
  assert.equal(safeText(42), "42");
  // Whatever the input, nothing dangerous is left.
  const bad = /[\x00-\x1f\x7f-\x9f\u061c\u200b\u200c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
  for (const [name, input] of HOSTILE) assert.ok(!bad.test(safeText(input)), name);
});

test("display width: wide CJK and emoji are two columns, a cut never splits a cluster or passes the width", () => {
  assert.equal(displayWidth("abc"), 3);
  assert.equal(displayWidth("日本"), 4);
  assert.equal(displayWidth(FAMILY), 2);
  assert.equal(displayWidth(FLAG), 2);
  assert.equal(clusterWidth("✓"), 1);
  assert.equal(clusterWidth("⌚"), 2, "emoji presentation");
  assert.equal(clusterWidth("e\u0301"), 1);
  assert.equal(displayWidth("ＡＢ"), 4, "fullwidth latin");
  const cjk = "漢".repeat(100);
  const cut = cutToWidth(cjk, 36);
  assert.equal(cut, "漢".repeat(17) + "…", "17 wide characters and the ellipsis: 35 columns, the 18th would pass 36");
  assert.ok(displayWidth(cut) <= 36);
  const fam = cutToWidth(`${"a".repeat(34)}${FAMILY}b`, 36);
  assert.equal(fam, `${"a".repeat(34)}…`, "the family does not fit whole: it is left out, not split");
  assert.equal(cutToWidth(`${"a".repeat(33)}${FAMILY}`, 36), `${"a".repeat(33)}${FAMILY}`, "35 columns fit");
  assert.equal(cutToWidth(`${"a".repeat(33)}${FLAG}${FLAG}`, 36), `${"a".repeat(33)}${FLAG}…`, "one flag and the ellipsis: 36 columns");
});

test("hostile rows: every section line is safe and within the width (table of fields × hostile strings, 100 CJK characters, an emoji family)", () => {
  const values = [...HOSTILE.map(([, v]) => v), "漢".repeat(100), FAMILY.repeat(30), `${FLAG}`.repeat(30), "\x1b]52;c;" + "A".repeat(5000) + "\x07"];
  const fields = ["alias", "agent", "label", "error", "model"];
  const bad = /[\x00-\x1f\x7f-\x9f\u061c\u200b\u200c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
  let checked = 0;
  for (const f of fields) {
    for (const v of values) {
      const row = { ...exp1, state: "failed", [f]: v, switches: [{ from: v, to: v, class: v, at: iso(1) }] };
      for (const input of [
        { ...base, page: page([row]) },
        { ...base, sessionID: "ses_c1", parentID: v, page: page([row]) },
        { ...base, warnings: [v], observer: { kind: "gone", why: v } },
      ]) {
        for (const l of sectionLines(input)) {
          checked++;
          assert.ok(!bad.test(l), `${f}: ${JSON.stringify(l)}`);
          assert.ok(displayWidth(l) <= SIDEBAR_WIDTH, `${f}: ${displayWidth(l)} columns: ${l}`);
        }
      }
    }
  }
  assert.ok(checked > 300);
});

test("model switches as toast lines: the first look is history, a later switch is news once, an old one first seen later is history too; lines are safe", () => {
  const seen = new Set();
  const sw = (from, to, s) => ({ from, to, class: "rate-limit", at: iso(s) });
  const e1 = { ...exp1, switches: [sw("fake/primary-model", "fake/fallback-model", 1)] };
  assert.deepEqual(newSwitches(seen, [e1, gen1], true), [], "what was there when the TUI looked is not toasted");
  assert.deepEqual(newSwitches(seen, [e1, gen1], false), [], "nor on the next look");
  const e2 = { ...e1, switches: [...e1.switches, sw("fake/fallback-model", "fake/third-model", 30)] };
  const g2 = { ...gen1, switches: [sw("fake/m", "fake/n", 20)] };
  assert.deepEqual(newSwitches(seen, [e2, g2], false, Date.parse(iso(10))), [
    "gen-1: fake/m failed (rate-limit); now on fake/n",
    "exp-1: fake/fallback-model failed (rate-limit); now on fake/third-model",
  ], "the last row's first");
  assert.deepEqual(newSwitches(seen, [e2, g2], false), [], "once each");
  const old = { ...gen1, sessionID: "ses_c9", alias: "gen-2", switches: [sw("fake/a", "fake/b", 5)] };
  assert.deepEqual(newSwitches(seen, [old], false, Date.parse(iso(10))), [], "made before the TUI started: history");
  const evil = { ...gen1, sessionID: "ses_e", alias: "x\x1b]52;c;AAAA\x07y\u202e", switches: [sw("fake/\x1b[2Ja", "fake/b", 40)] };
  assert.deepEqual(newSwitches(seen, [evil], false), ["xy: fake/a failed (rate-limit); now on fake/b"]);
  const many = new Set();
  for (let i = 0; i < MAX_SEEN_SWITCHES + 10; i++) newSwitches(many, [{ ...gen1, sessionID: `ses_${i}`, switches: [sw("fake/a", "fake/b", 1)] }], true);
  assert.equal(many.size, MAX_SEEN_SWITCHES, "seen is bounded");
});

test("the state problem the section's first line names: memory only when the state option is off, read-only when the file cannot be written", async (t) => {
  const { stateProblemOf } = await import(pathToFileURL(join(shimDir, "dist", "tuistate.js")).href);
  const { mkdtempSync, mkdirSync, chmodSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { execFileSync } = await import("node:child_process");
  assert.equal(await stateProblemOf({ stateSource: "off" }, undefined), "memory only");
  const dir = mkdtempSync(join(tmpdir(), "hookwire-tuistate-"));
  try {
    const file = join(dir, "state", "p.db");
    mkdirSync(join(dir, "state"));
    assert.equal(await stateProblemOf({ stateSource: "default" }, file), "", "a directory it can write");
    // Root writes anywhere: a read-only bind mount then; a user: no write bit.
    if (process.getuid?.() === 0) {
      try {
        execFileSync("mount", ["--bind", join(dir, "state"), join(dir, "state")]);
        execFileSync("mount", ["-o", "remount,bind,ro", join(dir, "state")]);
      } catch (err) {
        t.skip(`no read-only mount here: ${err}`);
        return;
      }
      try {
        assert.equal(await stateProblemOf({ stateSource: "default" }, file), "state read-only");
      } finally {
        execFileSync("umount", [join(dir, "state")]);
      }
    } else {
      chmodSync(join(dir, "state"), 0o500);
      assert.equal(await stateProblemOf({ stateSource: "default" }, file), "state read-only");
      chmodSync(join(dir, "state"), 0o700);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
