// Files the shim writes (the trace, the sidecar's log) where a checkout could
// have planted a symbolic link or a FIFO (issue 23): the link is not followed,
// the FIFO does not block, and a plain file is appended to.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { createHookwire } from "../dist/plugin.js";
import { openAppendNoFollow, Trace } from "../dist/trace.js";
import { fakeClient, realSidecar, scratch, waitFor } from "./helpers.mjs";

const scratches = [];
const instances = [];
after(async () => {
  for (const h of instances) await h.dispose();
  for (const s of scratches) s.cleanup();
});

function dir() {
  const s = scratch();
  scratches.push(s);
  return s.dir;
}

test("the trace: a symlink at its path is not followed (to a file, or dangling); a plain file is appended to", () => {
  const d = dir();
  const victim = join(d, "bashrc");
  writeFileSync(victim, "keep\n");
  symlinkSync(victim, join(d, "trace.jsonl"));
  new Trace(join(d, "trace.jsonl")).write({ ev: "spawn", pid: 1 });
  assert.equal(readFileSync(victim, "utf8"), "keep\n");

  symlinkSync(join(d, "nobody"), join(d, "dangling.jsonl"));
  new Trace(join(d, "dangling.jsonl")).write({ ev: "spawn", pid: 1 });
  assert.equal(existsSync(join(d, "nobody")), false);

  const plain = join(d, "plain.jsonl");
  writeFileSync(plain, "");
  new Trace(plain).write({ ev: "a" });
  new Trace(plain).write({ ev: "b" });
  assert.deepEqual(readFileSync(plain, "utf8").trim().split("\n").map((l) => JSON.parse(l).ev), ["a", "b"]);
});

test("openAppendNoFollow: a FIFO is refused at once, without waiting for a reader", { skip: process.platform === "win32" }, () => {
  const d = dir();
  const fifo = join(d, "fifo");
  execFileSync("mkfifo", [fifo]);
  assert.throws(() => openAppendNoFollow(fifo));
  assert.throws(() => openAppendNoFollow(d), "a directory");
});

test("the sidecar's log (logFile): a symlink at its path is not followed; the sidecar still runs", async () => {
  const d = dir();
  const victim = join(d, "bashrc");
  writeFileSync(victim, "keep\n");
  const log = join(d, "sidecar.log");
  symlinkSync(victim, log);
  const fc = fakeClient();
  const h = createHookwire({ client: fc.client }, { binary: realSidecar(), logFile: log, state: false, subagents: [] }, { ...process.env, HOME: d });
  instances.push(h);
  await waitFor(() => h.sidecar.state === "ready", 10_000);
  assert.equal(readFileSync(victim, "utf8"), "keep\n");
  assert.ok(lstatSync(log).isSymbolicLink(), "the link itself is left alone");
});
