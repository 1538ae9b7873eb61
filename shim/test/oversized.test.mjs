// A 300 MB reply line against the real plugin, in a process of its own
// (test/reply-size.mjs, the fake sidecar's `huge` mode): the hook passes
// through as "oversized" and the process's RSS stays under 400 MB. The
// timings (the hook's duration, the event loop's longest stall) are printed,
// not asserted: they depend on the machine.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { shimDir } from "./helpers.mjs";

test("a 300 MB reply line: passed through as oversized, RSS under 400 MB", () => {
  const out = execFileSync(process.execPath, [join(shimDir, "test", "reply-size.mjs")], {
    env: { ...process.env, FAKE_REPLY_BYTES: String(300e6) },
    encoding: "utf8",
    timeout: 120_000,
  });
  const m = JSON.parse(out.trim().split("\n").pop());
  console.log(`# 300 MB reply line: hook ${m.hookMs} ms (deadline ${m.deadlineMs}), longest event-loop stall ${m.maxLoopStallMs} ms, peak RSS ${m.peakRssMiB} MiB (${m.rssBeforeMiB} before)`);
  assert.equal(m.reason, "oversized");
  assert.equal(m.patchedUntouched, true);
  assert.equal(m.oversizedTraced, true);
  assert.ok(m.peakRssMiB < 400, `peak RSS ${m.peakRssMiB} MiB`);
});
