// The TUI section's lines (tuimodel.ts) for each state it can be in.
import assert from "node:assert/strict";
import { test } from "node:test";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { shimDir } from "./helpers.mjs";

const { sectionLines, fit, runWord, cacheWords, newSwitches, MAX_SEEN_SWITCHES, SIDEBAR_WIDTH } = await import(pathToFileURL(join(shimDir, "dist", "tuimodel.js")).href);

const ready = { kind: "ready", version: "1.4.0", lastLoad: "ok" };
const base = { observer: ready, sessionID: "ses_p", entries: [], cache: new Map(), warnings: [] };
const exp1 = {
  parent: "ses_p", agent: "explore", alias: "exp-1", taskId: "ses_c1", label: "Map the config loader", run: { state: "completed" },
  model: { model: "fake/fallback-model" },
  switches: [{ from: "fake/primary-model", to: "fake/fallback-model", reason: "rate-limit: Rate limit reached" }],
};
const gen1 = { parent: "ses_p", agent: "general", alias: "gen-1", taskId: "ses_c2", label: "Summarise", run: { state: "running" } };

test("each state of hookwire's own line", () => {
  const head = (observer, extra = {}) => sectionLines({ ...base, observer, ...extra })[0];
  assert.equal(head({ kind: "starting" }), "hookwire: starting");
  assert.equal(head({ kind: "off", why: "no hookwire binary" }), "hookwire: off (no hookwire binary)");
  assert.equal(head({ kind: "gone", why: "observer gone" }), "hookwire: down (observer gone)");
  assert.equal(head(ready), "hookwire 1.4.0: idle", "nothing of hookwire's work in the project yet");
  assert.equal(head(ready, { entries: [{ alias: "exp-1", run: { state: "running" } }] }), "hookwire 1.4.0: working");
  assert.equal(head(ready, { cache: new Map([["ses_p", { session: "ses_p", requests: 1 }]]) }), "hookwire 1.4.0: working", "a request's figures are work too");
  assert.equal(head(ready, { stateProblem: "memory-only" }), "hookwire 1.4.0: memory-only");
  assert.equal(head({ ...ready, lastLoad: "corrupt: bad" }), "hookwire 1.4.0: state corrupt: bad");
  assert.equal(head({ ...ready, version: "1.4.0+gabc123.dirty" }), "hookwire 1.4.0: idle", "a development build's suffix is left out");
  assert.equal(head({ ...ready, lastLoad: "missing" }), "hookwire 1.4.0: idle", "no database yet is not a problem");
});

test("the parent's view: subagents newest first with their state, details when few, the session's own cache", () => {
  const cache = new Map([
    ["ses_p", { session: "ses_p", requests: 4, cacheShare: 0.912, busts: 0 }],
    ["ses_c1", { session: "ses_c1", requests: 3, cacheShare: 0.5, busts: 1 }],
  ]);
  const lines = sectionLines({ ...base, entries: [gen1, exp1], cache, expanded: true });
  assert.deepEqual(lines, [
    "hookwire 1.4.0: working",
    "subagents:",
    " ~ gen-1 running",
    "   Summarise",
    " ✓ exp-1 done",
    "   Map the config loader",
    "   on fallback-model",
    "   ↪ from primary-model: rate-limit",
    "   cache 50% 1 bust",
    "this session: cache 91%",
  ]);
  for (const l of lines) assert.ok([...l].length <= SIDEBAR_WIDTH, l);
  const compact = sectionLines({ ...base, entries: [gen1, exp1], cache, expanded: false });
  assert.deepEqual(compact.slice(1, 4), ["subagents:", " ~ gen-1 running Summarise", " ✓ exp-1 done Map the config loader"]);
  assert.deepEqual(sectionLines(base).slice(1), ["no subagents yet"]);
});

test("a child's view: its alias, parent, model and fallback history", () => {
  const lines = sectionLines({ ...base, sessionID: "ses_c1", parentID: "ses_p", entries: [gen1, exp1] });
  assert.deepEqual(lines, [
    "hookwire 1.4.0: working",
    "subagent exp-1 (explore) done",
    "parent ses_p",
    "model fallback-model",
    "  primary-model → fallback-model: r…",
  ]);
});

test("a pending switch (asked for, not seen applied) never shows the subagent on the fallback", () => {
  const pending = {
    ...exp1,
    run: { state: "error", error: "Rate limit" },
    model: { model: "fake/primary-model" },
    switches: [{ ...exp1.switches[0], pending: true, at: "2026-12-01T12:00:00Z" }],
  };
  const parent = sectionLines({ ...base, entries: [pending], expanded: true });
  assert.ok(parent.includes("   on primary-model"), parent.join("\n"));
  assert.ok(parent.includes("   switching to fallback-model"), parent.join("\n"));
  assert.ok(!parent.includes("   on fallback-model"));
  const child = sectionLines({ ...base, sessionID: "ses_c1", parentID: "ses_p", entries: [pending] });
  assert.ok(child.includes("model primary-model"));
  assert.deepEqual(child.slice(-2), ["  primary-model → fallback-model: r…", "  (switching: not applied yet)"]);
  // Toasted as switching, and once more when it applied.
  const seen = new Set();
  assert.deepEqual(newSwitches(seen, [pending], false), ["exp-1: fake/primary-model failed (rate-limit: Rate limit reached); switching to fake/fallback-model"]);
  assert.deepEqual(newSwitches(seen, [pending], false), []);
  const applied = { ...pending, switches: [{ ...pending.switches[0], pending: undefined }] };
  assert.deepEqual(newSwitches(seen, [applied], false), ["exp-1: fake/primary-model failed (rate-limit: Rate limit reached); now on fake/fallback-model"]);
});

test("start-up warnings are shown while they last, the newest three, cut to the width", () => {
  const warnings = ['hookwire: cacheStabel: unknown option, ignored (did you mean "cacheStable"?)', "hookwire: HOOKWIRE_OPTIONS is not JSON"];
  const lines = sectionLines({ ...base, observer: { kind: "starting" }, warnings });
  assert.equal(lines[1], "! 2 warnings:");
  assert.equal(lines[2], "  cacheStabel: unknown option, igno…");
  assert.equal(lines[3], "  HOOKWIRE_OPTIONS is not JSON");
});

test("the small pieces: fit, run words, cache words", () => {
  assert.equal(fit("x".repeat(36)), "x".repeat(36));
  assert.equal(fit("x".repeat(37)), "x".repeat(35) + "…");
  assert.equal(runWord({ state: "error", error: "Task cancelled" }), "cancelled");
  assert.equal(runWord({ state: "error", error: "Rate limit" }), "failed");
  assert.equal(runWord(undefined), "idle");
  assert.equal(cacheWords(undefined), "");
  assert.equal(cacheWords({ requests: 2, cacheShare: null, noCacheFigures: true, busts: 2 }), "cache n/a 2 busts");
});

test("a cache share short of all never reads 100%, above none never 0%", async () => {
  const { sharePercent } = await import(pathToFileURL(join(shimDir, "dist", "tuimodel.js")).href);
  assert.equal(sharePercent(4368 / 4380), 99);
  assert.equal(sharePercent(1), 100);
  assert.equal(sharePercent(0.001), 1);
  assert.equal(sharePercent(0), 0);
  assert.equal(cacheWords({ requests: 3, cacheShare: 0.9973, busts: 0 }), "cache 99%");
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

test("model switches as toast lines: the first look is history, a later switch is news once, an old one first seen later is history too", () => {
  const seen = new Set();
  const at = (s) => new Date(Date.UTC(2026, 11, 4, 3, 0, s)).toISOString();
  const sw = (from, to, s) => ({ from, to, reason: "rate-limit: Rate limit reached", at: at(s) });
  const e1 = { ...exp1, switches: [sw("fake/primary-model", "fake/fallback-model", 1)] };
  assert.deepEqual(newSwitches(seen, [e1, gen1], true), [], "what was there when the TUI looked is not toasted");
  assert.deepEqual(newSwitches(seen, [e1, gen1], false), [], "nor on the next poll");
  const e2 = { ...e1, switches: [...e1.switches, sw("fake/fallback-model", "fake/third-model", 30)] };
  const g2 = { ...gen1, switches: [sw("fake/m", "fake/n", 20)] };
  assert.deepEqual(newSwitches(seen, [e2, g2], false, Date.parse(at(10))), [
    "gen-1: fake/m failed (rate-limit: Rate limit reached); now on fake/n",
    "exp-1: fake/fallback-model failed (rate-limit: Rate limit reached); now on fake/third-model",
  ], "the oldest entry's first (entries come newest first)");
  assert.deepEqual(newSwitches(seen, [e2, g2], false), [], "once each");
  const old = { ...gen1, taskId: "ses_c9", alias: "gen-2", switches: [sw("fake/a", "fake/b", 5)] };
  assert.deepEqual(newSwitches(seen, [old], false, Date.parse(at(10))), [], "made before the TUI started: history");
  const many = new Set();
  for (let i = 0; i < MAX_SEEN_SWITCHES + 10; i++) newSwitches(many, [{ ...gen1, taskId: `ses_${i}`, switches: [sw("fake/a", "fake/b", 1)] }], true);
  assert.equal(many.size, MAX_SEEN_SWITCHES, "seen is bounded");
});
