// The `record` option: a redacted recording of the session (hookwire serve
// --record FILE --record-redact), for a bug report.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { Logger } from "../dist/log.js";
import { resolveSettings } from "../dist/options.js";
import { sidecarArgs } from "../dist/statefile.js";
import { fakeClient } from "./helpers.mjs";

test("record: --record FILE --record-redact; a relative FILE is taken from the project; the env is the fallback", () => {
  const project = { worktree: "/work/proj", directory: "/work/proj" };
  const fc = fakeClient();
  const log = new Logger(fc.client);
  const cases = [
    { options: {}, env: {}, want: null },
    { options: { record: "/tmp/r.json" }, env: {}, want: "/tmp/r.json" },
    { options: { record: "bug.json" }, env: {}, want: join("/work/proj", "bug.json") },
    { options: {}, env: { HOOKWIRE_RECORD: "/tmp/e.json" }, want: "/tmp/e.json" },
    { options: { record: "/tmp/o.json" }, env: { HOOKWIRE_RECORD: "/tmp/e.json" }, want: "/tmp/o.json" },
    { options: { record: "" }, env: {}, want: null },
  ];
  for (const c of cases) {
    const s = resolveSettings({ ...c.options, state: false }, c.env, project);
    assert.equal(s.record, c.want, JSON.stringify(c));
    assert.equal("record" in s.config, false, "record is the shim's, never sent to the sidecar");
    const args = sidecarArgs(s, log);
    assert.deepEqual(args, c.want ? ["--record", c.want, "--record-redact"] : [], JSON.stringify(c));
  }
});

test("record: a --record of the user's own in args wins", () => {
  const fc = fakeClient();
  const s = resolveSettings({ record: "/tmp/r.json", args: ["--record=/tmp/mine.json"], state: false }, {}, {});
  assert.deepEqual(sidecarArgs(s, new Logger(fc.client)), ["--record=/tmp/mine.json"]);
});
