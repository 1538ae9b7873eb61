// The host the shim runs in (host.ts): the minimum version, the features a
// host lacks named once, and model variants on hosts that keep them off
// the model.
import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { belowMinimum, compareVersions, HostCapabilities, MIN_OPENCODE, versionBesideBinary } from "../dist/host.js";
import { createHookwire } from "../dist/plugin.js";
import { fakeClient, fakeSidecar, scratch, waitFor } from "./helpers.mjs";

test("versions compare numerically; only a known version below the minimum is refused", () => {
  const cases = [
    ["1.3.2", "1.3.2", 0],
    ["1.3.10", "1.3.2", 1],
    ["1.14.0", "1.3.2", 1],
    ["1.1.16", "1.3.2", -1],
    ["2.0.0", "1.18.33", 1],
  ];
  for (const [a, b, want] of cases) assert.equal(compareVersions(a, b), want, `${a} vs ${b}`);
  assert.equal(belowMinimum("1.1.16"), true);
  assert.equal(belowMinimum(MIN_OPENCODE), false);
  assert.equal(belowMinimum("1.18.33"), false);
  assert.equal(belowMinimum(undefined), false, "unknown: given the benefit of the doubt");
  assert.equal(belowMinimum("local"), false);
});

test("OpenCode's version is read beside an npm-installed binary, and nowhere else", () => {
  const s = scratch();
  const pkg = join(s.dir, "node_modules", "opencode-linux-x64");
  mkdirSync(join(pkg, "bin"), { recursive: true });
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "opencode-linux-x64", version: "1.3.2" }));
  assert.equal(versionBesideBinary(join(pkg, "bin", "opencode")), "1.3.2");
  assert.equal(versionBesideBinary(join(pkg, "bin", "node")), undefined, "not OpenCode's binary");
  assert.equal(versionBesideBinary(join(s.dir, "bin", "opencode")), undefined, "no package.json");
  s.cleanup();
});

test("below the minimum the plugin is off and says why, in the log and a toast", () => {
  const fc = fakeClient();
  const h = createHookwire({ client: fc.client }, { binary: fakeSidecar }, process.env, { host: { generation: 1, version: "1.1.16" } });
  assert.deepEqual(h.hooks, {});
  assert.equal(h.sidecar, undefined, "no sidecar started");
  const log = fc.logs.find((l) => l.message.includes("needs OpenCode"));
  assert.ok(log && log.level === "error" && log.message.includes(MIN_OPENCODE) && log.message.includes("1.1.16"), JSON.stringify(fc.logs));
  assert.equal(fc.toasts.filter((t) => t.message.includes(MIN_OPENCODE)).length, 1);
});

test("a missing feature is named once, and only when the configuration uses it", () => {
  const reports = [];
  const caps = new HostCapabilities({ generation: 1, version: "1.3.2" }, (m, off) => reports.push({ m, off }));
  caps.set("toasts", true);
  caps.announce();
  assert.equal(reports.length, 0, "nothing off, nothing said");
  caps.learnVariant({ message: { id: "m", model: { providerID: "p", modelID: "m" }, variant: undefined } });
  caps.learnVariant({ message: { id: "m", model: { providerID: "p", modelID: "m", variant: "high" } } });
  assert.equal(caps.has("variant"), false, "learnt from the first call, which had message.variant");
  caps.announce();
  caps.announce();
  assert.equal(reports.length, 1);
  assert.deepEqual(reports[0].off, ["variant"]);
  assert.match(reports[0].m, /OpenCode 1\.3\.2.*model variants/);
  const unused = new HostCapabilities({ generation: 1 }, (m) => reports.push({ m }));
  unused.ignore("variant");
  unused.set("variant", false);
  unused.announce();
  assert.equal(reports.length, 1, "variants are not used without agentModels: not named");
});

test("on a host that keeps the variant beside the model, a variant the sidecar sets comes off again", async () => {
  const s = scratch();
  const patch = [{ op: "replace", path: "/message/model", value: { providerID: "fake", modelID: "big", variant: "high" } }];
  const fc = fakeClient();
  const h = createHookwire(
    { client: fc.client },
    { binary: fakeSidecar, args: ["ok"], trace: s.trace, logFile: s.log, subagents: [], agentModels: { explorer: ["fake/big"] }, timeoutMs: 3000 },
    { ...process.env, FAKE_PATCH: JSON.stringify(patch) },
    { host: { generation: 1, version: "1.3.2" } },
  );
  try {
    // Ready first: the test is about the reply, not about a start slower than the hook's deadline.
    await waitFor(() => h.sidecar.state === "ready", 30_000);
    const old = { message: { id: "m1", role: "user", model: { providerID: "fake", modelID: "small" }, variant: undefined }, parts: [] };
    await h.hooks["chat.message"]({ sessionID: "ses_1", agent: "explorer" }, old);
    assert.deepEqual(old.message.model, { providerID: "fake", modelID: "big" }, "the model changed, without the variant");
    assert.ok(fc.toasts.some((t) => /model variants/.test(t.message)), JSON.stringify(fc.toasts));
    const fc2 = fakeClient();
    const h2 = createHookwire(
      { client: fc2.client },
      { binary: fakeSidecar, args: ["ok"], subagents: [], agentModels: { explorer: ["fake/big"] }, timeoutMs: 3000 },
      { ...process.env, FAKE_PATCH: JSON.stringify(patch) },
      { host: { generation: 1, version: "1.18.33" } },
    );
    await waitFor(() => h2.sidecar.state === "ready", 30_000);
    const now = { message: { id: "m1", role: "user", model: { providerID: "fake", modelID: "small" } }, parts: [] };
    await h2.hooks["chat.message"]({ sessionID: "ses_1", agent: "explorer" }, now);
    assert.deepEqual(now.message.model, { providerID: "fake", modelID: "big", variant: "high" }, "1.14+: the variant stays");
    await h2.dispose();
  } finally {
    await h.dispose();
    s.cleanup();
  }
});
