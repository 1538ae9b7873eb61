// The package's `bin` (src/bin.ts, src/cli.ts): `npx hookwire-opencode
// doctor` runs the platform package's sidecar binary installed beside the
// plugin, with the same arguments and exit status; without that package it
// says what is missing and exits 1.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { platformPackage } from "../dist/binary.js";
import { scratch, shimDir } from "./helpers.mjs";

const scratches = [];
after(() => {
  for (const s of scratches) s.cleanup();
});

/** node_modules as npm lays out the plugin with its bin (dist/bin.js, the bundle) and, unless withPlatform is false, the platform package. */
function installed(withPlatform = true) {
  const s = scratch();
  scratches.push(s);
  const nm = join(s.dir, "node_modules");
  const plugin = join(nm, "hookwire-opencode");
  mkdirSync(join(plugin, "dist"), { recursive: true });
  writeFileSync(join(plugin, "package.json"), JSON.stringify({ name: "hookwire-opencode", version: "1.2.3", type: "module", bin: { "hookwire-opencode": "dist/bin.js" } }));
  const bin = join(plugin, "dist", "bin.js");
  copyFileSync(join(shimDir, "dist", "bin.js"), bin);
  chmodSync(bin, 0o755);
  mkdirSync(join(nm, ".bin"));
  symlinkSync(join("..", "hookwire-opencode", "dist", "bin.js"), join(nm, ".bin", "hookwire-opencode"));
  if (withPlatform) {
    const pkg = join(nm, platformPackage());
    mkdirSync(join(pkg, "bin"), { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: platformPackage(), version: "1.2.3" }));
    // A stand-in sidecar: it says how it was called; "signal" ends it by SIGTERM.
    writeFileSync(join(pkg, "bin", "hookwire"), '#!/bin/sh\n[ "$1" = signal ] && kill -TERM $$\necho "ran: $*"\necho "stderr: $1" >&2\nexit 7\n', { mode: 0o755 });
  }
  return { dir: s.dir, bin, link: join(nm, ".bin", "hookwire-opencode") };
}

test("the bin runs the platform package's binary with the same arguments, stdout, stderr and exit status", { skip: process.platform === "win32" }, () => {
  const i = installed();
  for (const [how, cmd, args] of [
    ["node dist/bin.js", process.execPath, [i.bin]],
    ["through node_modules/.bin's link, as npx runs it", i.link, []],
  ]) {
    const r = spawnSync(cmd, [...args, "doctor", "--project", "a dir"], { encoding: "utf8", cwd: i.dir });
    assert.equal(r.status, 7, `${how}: ${r.stderr}`);
    assert.equal(r.stdout, "ran: doctor --project a dir\n", how);
    assert.equal(r.stderr, "stderr: doctor\n", how);
  }
});

test("a binary ended by a signal ends the bin by the same signal", { skip: process.platform === "win32" }, () => {
  const i = installed();
  const r = spawnSync(process.execPath, [i.bin, "signal"], { encoding: "utf8" });
  assert.equal(r.signal, "SIGTERM", `status ${r.status}, stderr ${r.stderr}`);
});

test("without the platform package: exit 1 and a message naming it", () => {
  const i = installed(false);
  const r = spawnSync(process.execPath, [i.bin, "doctor"], { encoding: "utf8" });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, new RegExp(`the sidecar binary is not installed: ${platformPackage()} is not installed beside hookwire-opencode .*--omit=optional`));
});
