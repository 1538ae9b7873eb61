#!/usr/bin/env node
// The recording checks of the end-to-end test (issue 13), run by
// scripts/e2e-opencode.sh after its own: the run recorded itself through
// the shim's `record` option (HOOKWIRE_RECORD) into WORKDIR/recording.json
// (recording-2.json, ... for the sidecars that replaced a killed one).
//   1. every recording is there, mode 0600, and starts from a state step;
//   2. `hookwire replay` of each passes against the binary that made it;
//   3. a copy whose initialize carries another phaseReminder.text fails its
//      replay, first at the step whose reply holds the reminder, and the
//      report names that step.
// It reads the recordings through `hookwire replay -json`, never parsing
// the transcript format itself.
// usage: e2e-record-check.mjs WORKDIR SIDECAR

import { spawnSync } from "node:child_process";
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { check, finish } from "./lib/checks.mjs";

const [work, bin] = process.argv.slice(2);
if (!work || !bin) {
  console.error("usage: e2e-record-check.mjs WORKDIR SIDECAR");
  process.exit(2);
}

/**
 * Replays transcripts with `hookwire replay -json` (the binary reads the
 * format: testdata/transcripts/README.md, "Reading transcripts in code"):
 * the exit status and, per file, {file, ok, error?, steps: [{step, line,
 * value}], differences: [{step, line, what, want, got}]}.
 */
function replayJSON(...args) {
  const r = spawnSync(bin, ["replay", "-json", ...args], { encoding: "utf8" });
  let results = [];
  try {
    results = r.stdout.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  } catch (e) {
    return { status: r.status, results: [], output: `unreadable -json output (${e.message}): ${r.stdout}${r.stderr}` };
  }
  return { status: r.status, results, output: r.stdout + r.stderr };
}

/** Writes steps one compact value per line, which the reader takes as well. */
const writeSteps = (file, steps) => writeFileSync(file, steps.map((s) => JSON.stringify(s)).join("\n") + "\n");

const order = (name) => Number(/^recording(?:-(\d+))?\.json$/.exec(name)?.[1] ?? 1);
const files = readdirSync(work)
  .filter((n) => /^recording(-\d+)?\.json$/.test(n))
  .sort((a, b) => order(a) - order(b))
  .map((n) => join(work, n));

// Each recording replayed once: its steps (as the binary read them) serve
// checks 1 and 3, its result check 2.
const replayed = new Map(
  files.map((f) => {
    const r = replayJSON(f);
    return [f, { status: r.status, result: r.results[0], output: r.output }];
  }),
);
const stepsOf = (f) => (replayed.get(f).result?.steps ?? []).map((s) => s.value);

// --- 1 -----------------------------------------------------------------------
{
  const bad = files.flatMap((f) => {
    const mode = statSync(f).mode & 0o777;
    const steps = stepsOf(f);
    const firstReal = steps.find((s) => !("note" in s));
    const why = [];
    if (mode !== 0o600) why.push(`mode ${mode.toString(8)}`);
    if (steps.length === 0) why.push(`no steps read: ${replayed.get(f).result?.error ?? replayed.get(f).output}`);
    else if (!firstReal || !("state" in firstReal)) why.push("no state step before the first message");
    return why.length ? [`${f}: ${why.join(", ")}`] : [];
  });
  check(
    "recording: the run recorded itself through the shim (mode 0600, starting from the loaded state)",
    files.length > 0 && bad.length === 0,
    files.length === 0 ? `no ${join(work, "recording.json")}` : bad.join("; ") || `${files.length} file(s)`,
  );
}

// --- 2 -----------------------------------------------------------------------
{
  const failed = files.flatMap((f) => {
    const { status, result, output } = replayed.get(f);
    return status === 0 && result?.ok ? [] : [`${f}: exit ${status}\n${output}`];
  });
  check("recording: hookwire replay of each recording passes against the same binary", files.length > 0 && failed.length === 0, failed.join("\n"));
}

// --- 3 -----------------------------------------------------------------------
{
  const changed = "E2E CHANGED REMINDER: a different phaseReminder.text";
  let result = { ok: false, why: "no recording has a reply that holds the phase reminder" };
  for (const f of files) {
    const steps = stepsOf(f);
    const init = steps.find((s) => s.send?.method === "initialize");
    if (!init) continue;
    const params = (init.send.params ??= {});
    const config = (params.config ??= {});
    config.phaseReminder = { ...(config.phaseReminder ?? {}), text: changed };
    const copy = f.replace(/\.json$/, ".changed-reminder.json");
    const updated = f.replace(/\.json$/, ".changed-reminder-updated.json");
    writeSteps(copy, steps);
    writeSteps(updated, steps);
    // What the changed text makes the sidecar answer: the first step
    // whose reply holds it is where the replay must fail first.
    const u = replayJSON("-update", updated);
    if (u.status !== 0 || !u.results[0]?.ok) {
      result = { ok: false, why: `replay -update ${updated}: exit ${u.status}\n${u.output}` };
      break;
    }
    const want = u.results[0].steps.find((s) => "recv" in s.value && JSON.stringify(s.value.recv).includes(changed))?.step ?? 0;
    if (want === 0) continue;
    const r = replayJSON(copy);
    const first = r.results[0]?.differences?.[0];
    // The report a person reads names the same step.
    const report = spawnSync(bin, ["replay", copy], { encoding: "utf8" });
    const named = new RegExp(`^\\s+step ${want} \\(line \\d+\\): .*differ`, "m").test(report.stdout);
    result = {
      ok: r.status === 1 && first?.step === want && /differ/.test(first?.what ?? "") && report.status === 1 && named,
      why: `${copy}: exit ${r.status}, first difference at step ${first?.step ?? "none"} (${first?.what ?? ""}), ` +
        `the reminder's first reply is step ${want}; the report ${named ? "names it" : `does not name it:\n${report.stdout}`}`,
    };
    break;
  }
  check("recording: another phaseReminder.text fails the replay at the first reply holding the reminder, named in the report", result.ok, result.why);
}

finish("e2e recording");
