// The binary as the npm packages ship it (src/binary.ts): the platform
// package beside the plugin, the order the shim looks in, the version check
// between plugin and sidecar, and the bundled dist/index.js working on its
// own wherever it is copied.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { comparableVersion, platformBinary, platformPackage, versionMismatch } from "../dist/binary.js";
import { resolveSettings } from "../dist/options.js";
import { createHookwire } from "../dist/plugin.js";
import { fakeClient, fakeSidecar, scratch, shimDir, waitFor } from "./helpers.mjs";

const scratches = [];
const instances = [];
after(async () => {
  for (const h of instances) await h.dispose();
  for (const s of scratches) s.cleanup();
});

/** node_modules as npm lays out hookwire-opencode and one platform package; returns the plugin's dist/index.js. */
function installed(platform = process.platform, arch = process.arch) {
  const s = scratch();
  scratches.push(s);
  const nm = join(s.dir, "node_modules");
  const plugin = join(nm, "hookwire-opencode");
  mkdirSync(join(plugin, "dist"), { recursive: true });
  writeFileSync(join(plugin, "package.json"), JSON.stringify({ name: "hookwire-opencode", version: "1.2.3", type: "module" }));
  const pkg = join(nm, platformPackage(platform, arch));
  mkdirSync(join(pkg, "bin"), { recursive: true });
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: platformPackage(platform, arch), version: "1.2.3", os: [platform], cpu: [arch] }));
  const bin = join(pkg, "bin", platform === "win32" ? "hookwire.exe" : "hookwire");
  // The fake where it lies (it imports the contract's capabilities beside it), run by the packaged path.
  writeFileSync(bin, `#!/usr/bin/env node\nimport(${JSON.stringify(pathToFileURL(fakeSidecar).href)});\n`, { mode: 0o755 });
  return { dir: s.dir, entry: join(plugin, "dist", "index.js"), bin, trace: s.trace };
}

test("the platform package is named after node's platform and arch, as esbuild's are", () => {
  for (const [platform, arch, want] of [
    ["linux", "x64", "hookwire-opencode-linux-x64"],
    ["linux", "arm64", "hookwire-opencode-linux-arm64"],
    ["darwin", "x64", "hookwire-opencode-darwin-x64"],
    ["darwin", "arm64", "hookwire-opencode-darwin-arm64"],
    ["win32", "x64", "hookwire-opencode-win32-x64"],
  ]) {
    assert.equal(platformPackage(platform, arch), want);
  }
});

test("platformBinary resolves the platform package beside the plugin, and nothing when it is absent", () => {
  const linux = installed("linux", "x64");
  assert.equal(platformBinary(pathToFileURL(linux.entry), "linux", "x64"), linux.bin);
  assert.equal(platformBinary(pathToFileURL(linux.entry), "linux", "arm64"), null, "another platform's package is not installed");
  const win = installed("win32", "x64");
  assert.equal(platformBinary(pathToFileURL(win.entry), "win32", "x64"), join(dirname(win.bin), "hookwire.exe"));
  // From this checkout no platform package is installed.
  assert.equal(platformBinary(pathToFileURL(join(shimDir, "dist", "index.js"))), null);
});

test("the binary is looked for in order: the option, HOOKWIRE_BIN, the platform package, PATH", () => {
  const pathDir = dirname(fakeSidecar);
  const cases = [
    { name: "option wins", options: { binary: "/opt/a" }, env: { HOOKWIRE_BIN: fakeSidecar }, packaged: "/pkg/hookwire", want: ["/opt/a", "option"] },
    { name: "env before the package", options: {}, env: { HOOKWIRE_BIN: fakeSidecar }, packaged: "/pkg/hookwire", want: [fakeSidecar, "env"] },
    { name: "package before PATH", options: {}, env: { PATH: pathDir }, packaged: "/pkg/hookwire", want: ["/pkg/hookwire", "package"] },
    { name: "PATH last", options: {}, env: { PATH: "/nonexistent" }, packaged: null, want: [null, "none"] },
  ];
  for (const c of cases) {
    const s = resolveSettings(c.options, c.env, {}, () => c.packaged);
    assert.deepEqual([s.binary, s.binarySource], c.want, c.name);
  }
});

test("a HOOKWIRE_BIN that names no file: the platform package (else PATH) runs, with a warning that says to unset it", () => {
  const pathDir = dirname(fakeSidecar);
  const cases = [
    {
      name: "stale path, package installed",
      env: { HOOKWIRE_BIN: "/gone/hookwire" },
      packaged: "/pkg/hookwire",
      want: ["/pkg/hookwire", "package"],
      warning: "HOOKWIRE_BIN=/gone/hookwire names no file; using /pkg/hookwire (the platform package) instead. Unset HOOKWIRE_BIN (or point it at a hookwire binary)",
    },
    {
      name: "stale bare name, nothing else found",
      env: { HOOKWIRE_BIN: "no-such-hookwire", PATH: join(pathDir, "bin-for-test") },
      packaged: null,
      want: [null, "none"],
      warning: "HOOKWIRE_BIN=no-such-hookwire names no file; no other hookwire was found either. Unset HOOKWIRE_BIN (or point it at a hookwire binary)",
    },
    { name: "a bare name found on PATH is used", env: { HOOKWIRE_BIN: "fake-sidecar.mjs", PATH: pathDir }, packaged: "/pkg/hookwire", want: [fakeSidecar, "env"], warning: undefined },
    { name: "the option wins: HOOKWIRE_BIN is not looked at", options: { binary: "/opt/a" }, env: { HOOKWIRE_BIN: "/gone" }, packaged: null, want: ["/opt/a", "option"], warning: undefined },
  ];
  for (const c of cases) {
    const s = resolveSettings(c.options ?? {}, c.env, {}, () => c.packaged);
    assert.deepEqual([s.binary, s.binarySource], c.want, c.name);
    assert.deepEqual(s.warnings, c.warning ? [c.warning] : [], c.name);
  }
});

test("versions compare without a leading v, and build metadata as npm keeps it", () => {
  assert.equal(comparableVersion("v1.2.3"), "1.2.3");
  assert.equal(comparableVersion("0.0.0-dev+gabc1234"), "0.0.0-dev.gabc1234");
  const rows = [
    { plugin: "1.2.3", server: "v1.2.3", mismatch: false },
    { plugin: "1.2.3-4-gabc1234-dirty", server: "v1.2.3-4-gabc1234-dirty", mismatch: false },
    { plugin: "0.0.0-dev.gabc1234", server: "0.0.0-dev+gabc1234", mismatch: false },
    { plugin: "0.0.0-dev", server: "v9.9.9", mismatch: false, why: "a plugin run from a checkout is not compared" },
    { plugin: "1.2.3", server: "devel+abc1234-dirty", mismatch: false, why: "a go build outside make is not compared" },
    { plugin: "1.2.3", server: undefined, mismatch: false, why: "no version reported" },
    { plugin: "1.2.3", server: "v1.2.4", mismatch: true },
    { plugin: "0.0.0-dev.gabc1234", server: "0.0.0-dev+gdef5678", mismatch: true },
  ];
  for (const r of rows) {
    const m = versionMismatch(r.plugin, r.server === undefined ? {} : { name: "hookwire", version: r.server }, "/bin/hookwire");
    assert.equal(m !== undefined, r.mismatch, `${r.plugin} vs ${r.server}${r.why ? `: ${r.why}` : ""}`);
    if (m) {
      assert.ok(m.includes(r.plugin) && m.includes(r.server), `names both versions: ${m}`);
    }
  }
});

test("plugin and sidecar of different versions: a warning in the log and a toast naming both; the hooks still run", async () => {
  const fc = fakeClient();
  const s = scratch();
  scratches.push(s);
  const h = createHookwire(
    { client: fc.client },
    { binary: fakeSidecar, args: ["ok"], logFile: null, subagents: [] },
    { ...process.env, FAKE_VERSION: "2.0.0" },
    { pluginVersion: "1.0.0" },
  );
  instances.push(h);
  await waitFor(() => h.sidecar.state === "ready");
  const warned = fc.logs.filter((l) => l.message.includes("version mismatch"));
  assert.equal(warned.length, 1);
  assert.equal(warned[0].level, "warn");
  assert.match(warned[0].message, /hookwire-opencode is 1\.0\.0 but the sidecar .* is 2\.0\.0/);
  assert.equal(fc.toasts.length, 1);
  assert.match(fc.toasts[0].message, /^version mismatch: .*1\.0\.0.*2\.0\.0/);
  assert.ok(h.sidecar.wantsHook("tool.execute.before"));

  // The same version: not a word.
  const same = fakeClient();
  const h2 = createHookwire({ client: same.client }, { binary: fakeSidecar, args: ["ok"], logFile: null, subagents: [] }, { ...process.env, FAKE_VERSION: "v1.0.0" }, { pluginVersion: "1.0.0" });
  instances.push(h2);
  await waitFor(() => h2.sidecar.state === "ready");
  assert.equal(same.logs.filter((l) => l.message.includes("version mismatch")).length, 0);
  assert.equal(same.toasts.length, 0);
});

test("a sidecar that refuses the protocol version: the log and a toast name the plugin's and the binary's versions", async () => {
  // `--version` answered by sh, the rest by the fake: the plugin gives
  // --version 2 s, which a node start can take on a loaded machine.
  const s = scratch();
  scratches.push(s);
  const binary = join(s.dir, "fake-sidecar.sh");
  writeFileSync(binary, `#!/bin/sh\nif [ "$1" = --version ]; then echo "hookwire $FAKE_VERSION"; exit 0; fi\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(fakeSidecar)} "$@"\n`, { mode: 0o755 });
  const fc = fakeClient();
  const h = createHookwire(
    { client: fc.client },
    { binary, args: ["reject"], logFile: null, subagents: [] },
    { ...process.env, FAKE_VERSION: "9.9.9", FAKE_REJECT: "unsupported protocolVersion 1: this sidecar speaks [2]" },
    { pluginVersion: "1.0.0" },
  );
  instances.push(h);
  await waitFor(() => h.sidecar.state === "failed");
  const entry = await waitFor(() => fc.logs.find((l) => l.level === "error"));
  assert.match(entry.message, /sidecar .*fake-sidecar\.sh \(version 9\.9\.9\) does not speak protocol 1, which the plugin hookwire-opencode 1\.0\.0 needs/);
  assert.match(entry.message, /this sidecar speaks \[2\]/);
  assert.equal(fc.toasts.length, 1);
  assert.equal(fc.toasts[0].variant, "error");
  assert.match(fc.toasts[0].message, /version 9\.9\.9.*1\.0\.0/);
});

test("the bundled dist/index.js works copied on its own, and runs the sidecar of the platform package beside it", () => {
  const inst = installed();
  copyFileSync(join(shimDir, "dist", "index.js"), inst.entry);
  // Only node itself on PATH, no HOOKWIRE_BIN: the platform package is the one place left.
  const env = { PATH: dirname(process.execPath), HOME: inst.dir, XDG_STATE_HOME: join(inst.dir, "state") };
  const script = `
    const m = await import(${JSON.stringify(pathToFileURL(inst.entry).href)});
    const hooks = await m.default.server({}, { trace: ${JSON.stringify(inst.trace)}, args: ["ok"], logFile: null, subagents: [], timeoutMs: 5000 });
    const out = { args: { subagent_type: "explorer" } };
    await hooks["tool.execute.before"]({ tool: "task", sessionID: "ses_1", callID: "c1" }, out);
    await hooks.dispose();
    console.log(JSON.stringify({ id: m.default.id, exports: Object.keys(m) }));`;
  const stdout = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: inst.dir, env, encoding: "utf8" });
  assert.deepEqual(JSON.parse(stdout.trim().split("\n").at(-1)), { id: "hookwire", exports: ["default"] });
  const trace = readFileSync(inst.trace, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const spawned = trace.find((r) => r.ev === "spawn");
  assert.equal(spawned?.binary, inst.bin);
  assert.ok(trace.some((r) => r.ev === "reply" && r.method === "tool.execute.before" && r.ok), "the packaged sidecar answered a hook");
});
