#!/usr/bin/env node
// What one oversized reply line costs OpenCode's process: the plugin (from
// DIST, default ../dist) runs against the fake sidecar's `huge` mode, which
// answers a tool.execute.before with one line of FAKE_REPLY_BYTES (default
// 300 MB). Prints one JSON object: the hook's duration and how it ended,
// the event loop's longest stall while the line streamed in, and the peak
// RSS of this process. oversized.test.mjs runs it; run it by hand against
// an older build's dist to compare:
//   node test/reply-size.mjs [DIST] [hook deadline ms]
import { monitorEventLoopDelay } from "node:perf_hooks";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { fakeClient, fakeSidecar, scratch, waitFor } from "./helpers.mjs";

const dist = resolve(process.argv[2] ?? new URL("../dist", import.meta.url).pathname);
const deadline = Number(process.argv[3] ?? 5000);
const { createHookwire } = await import(pathToFileURL(`${dist}/plugin.js`).href);

const s = scratch();
const fc = fakeClient();
const h = createHookwire(
  { client: fc.client },
  { binary: fakeSidecar, args: ["huge"], trace: s.trace, logFile: null, state: false, subagents: [], timeoutMs: deadline },
  { ...process.env },
);
await waitFor(() => h.sidecar.state === "ready", 10_000);

let peakRss = process.memoryUsage().rss;
const rssBefore = peakRss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 5);
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();
const output = { args: { description: "d", prompt: "p", subagent_type: "explorer" } };
const t0 = performance.now();
await h.hooks["tool.execute.before"]({ tool: "task", sessionID: "ses_parent", callID: "c1" }, output);
const hookMs = performance.now() - t0;
// The rest of the line still streams in after the call failed: wait for it
// (the sidecar writes nothing else) so the stall and RSS cover all of it.
const pid = h.sidecar.pid;
let last = -1;
let still = 0;
while (still < 20) {
  await new Promise((r) => setTimeout(r, 50));
  const status = readFileSync(`/proc/${pid}/io`, "utf8").match(/wchar: (\d+)/)?.[1];
  if (status === last) still++;
  else (still = 0), (last = status);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}
loop.disable();
clearInterval(sampler);
const reply = s.records().find((r) => r.ev === "reply" && r.method === "tool.execute.before");
console.log(
  JSON.stringify({
    dist,
    replyBytes: Number(process.env.FAKE_REPLY_BYTES ?? 300e6),
    hookMs: Math.round(hookMs),
    deadlineMs: deadline,
    reason: reply?.ok ? "ok" : reply?.reason,
    maxLoopStallMs: Math.round(loop.max / 1e6),
    rssBeforeMiB: Math.round(rssBefore / 1048576),
    peakRssMiB: Math.round(peakRss / 1048576),
    patchedUntouched: output.args.subagent_type === "explorer",
    oversizedTraced: s.records().some((r) => r.ev === "oversized"),
  }),
);
await h.dispose();
s.cleanup();
process.exit(0);
