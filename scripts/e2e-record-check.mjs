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
// usage: e2e-record-check.mjs WORKDIR SIDECAR

import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { check, finish } from "./lib/checks.mjs";

const [work, bin] = process.argv.slice(2);
if (!work || !bin) {
  console.error("usage: e2e-record-check.mjs WORKDIR SIDECAR");
  process.exit(2);
}

/** The steps of a transcript: a stream of JSON values (testdata/transcripts/README.md). */
function readSteps(file) {
  const text = readFileSync(file, "utf8");
  const steps = [];
  let depth = 0, start = -1, inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      if (depth++ === 0) start = i;
    } else if ((c === "}" || c === "]") && --depth === 0) steps.push(JSON.parse(text.slice(start, i + 1)));
  }
  return steps;
}

const writeSteps = (file, steps) => writeFileSync(file, steps.map((s) => JSON.stringify(s)).join("\n\n") + "\n");

const replay = (...args) => spawnSync(bin, ["replay", ...args], { encoding: "utf8" });

const order = (name) => Number(/^recording(?:-(\d+))?\.json$/.exec(name)?.[1] ?? 1);
const files = readdirSync(work)
  .filter((n) => /^recording(-\d+)?\.json$/.test(n))
  .sort((a, b) => order(a) - order(b))
  .map((n) => join(work, n));

// --- 1 -----------------------------------------------------------------------
{
  const bad = files.flatMap((f) => {
    const mode = statSync(f).mode & 0o777;
    const steps = readSteps(f);
    const firstReal = steps.find((s) => !("note" in s));
    const why = [];
    if (mode !== 0o600) why.push(`mode ${mode.toString(8)}`);
    if (!firstReal || !("state" in firstReal)) why.push("no state step before the first message");
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
    const r = replay(f);
    return r.status === 0 ? [] : [`${f}: exit ${r.status}\n${r.stdout}${r.stderr}`];
  });
  check("recording: hookwire replay of each recording passes against the same binary", files.length > 0 && failed.length === 0, failed.join("\n"));
}

// --- 3 -----------------------------------------------------------------------
{
  const changed = "E2E CHANGED REMINDER: a different phaseReminder.text";
  let result = { ok: false, why: "no recording has a reply that holds the phase reminder" };
  for (const f of files) {
    const steps = readSteps(f);
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
    const u = replay("-update", updated);
    if (u.status !== 0) {
      result = { ok: false, why: `replay -update ${updated}: exit ${u.status}\n${u.stdout}${u.stderr}` };
      break;
    }
    const want = readSteps(updated).findIndex((s) => "recv" in s && JSON.stringify(s.recv).includes(changed)) + 1;
    if (want === 0) continue;
    const r = replay(copy);
    const first = /^\s+step (\d+) \(line \d+\): (.*)$/m.exec(r.stdout);
    const got = first ? Number(first[1]) : 0;
    result = {
      ok: r.status === 1 && got === want && /differ/.test(first?.[2] ?? ""),
      why: `${copy}: exit ${r.status}, first difference reported at step ${got}, the reminder's first reply is step ${want}` +
        (got === want ? "" : `\n${r.stdout}`),
    };
    break;
  }
  check("recording: another phaseReminder.text fails the replay at the first reply holding the reminder, named in the report", result.ok, result.why);
}

finish("e2e recording");
