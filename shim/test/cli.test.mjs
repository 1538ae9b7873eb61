// The package's `bin` (src/bin.ts, src/cli.ts): `npx hookwire-opencode
// doctor` runs the platform package's sidecar binary installed beside the
// plugin, with the same arguments and exit status; without that package it
// says what is missing and exits 1.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { platformPackage } from "../dist/binary.js";
import { scratch, shimDir } from "./helpers.mjs";

const scratches = [];
after(() => {
  for (const s of scratches) s.cleanup();
});

/** node_modules as npm lays out the plugin with its bin (dist/bin.js, the bundle) and, unless withPlatform is false, the platform package. */
function installed(withPlatform = true, under) {
  let dir = under;
  if (!dir) {
    const s = scratch();
    scratches.push(s);
    dir = s.dir;
  }
  const nm = join(dir, "node_modules");
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
  return { dir, bin, link: join(nm, ".bin", "hookwire-opencode") };
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

test("a binary ended by SIGPIPE (`hookwire-opencode sessions --json | head -c 10`) exits 141, as the binary does run directly", { skip: process.platform === "win32" }, () => {
  const i = installed();
  // The stand-in writes more than head reads, after head has gone: SIGPIPE.
  writeFileSync(join(i.dir, "node_modules", platformPackage(), "bin", "hookwire"), "#!/bin/sh\nwhile :; do echo 0123456789; done\n", { mode: 0o755 });
  const direct = spawnSync("/bin/bash", ["-c", `'${join(i.dir, "node_modules", platformPackage(), "bin", "hookwire")}' | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`], { encoding: "utf8" });
  assert.equal(direct.stdout.trim(), "141", "the binary run directly");
  const viaBin = spawnSync("/bin/bash", ["-c", `'${i.link}' sessions --json | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`], { encoding: "utf8" });
  assert.equal(viaBin.stdout.trim(), "141", `through the bin: ${viaBin.stderr}`);
});

test("a platform package planted in a parent node_modules is never run; one nested in the plugin's own is", { skip: process.platform === "win32" }, () => {
  const outer = scratch();
  scratches.push(outer);
  const app = join(outer.dir, "app");
  mkdirSync(app);
  // The install tree moved under outer/app, the plant in outer/node_modules.
  const nm = join(outer.dir, "node_modules", platformPackage(), "bin");
  mkdirSync(nm, { recursive: true });
  writeFileSync(join(outer.dir, "node_modules", platformPackage(), "package.json"), JSON.stringify({ name: platformPackage(), version: "1.2.3" }));
  const marker = join(outer.dir, "planted-ran");
  writeFileSync(join(nm, "hookwire"), `#!/bin/sh\ntouch '${marker}'\nexit 0\n`, { mode: 0o755 });
  const inner = installed(false, app);
  const r = spawnSync(process.execPath, [inner.bin, "doctor"], { encoding: "utf8" });
  assert.equal(r.status, 1, r.stderr);
  assert.equal(existsSync(marker), false, "the planted binary ran");
  assert.match(r.stderr, /is not installed beside hookwire-opencode/);
  // Nested in the plugin's own node_modules (npm's layout for a global install): found.
  const own = join(app, "node_modules", "hookwire-opencode", "node_modules", platformPackage(), "bin");
  mkdirSync(own, { recursive: true });
  writeFileSync(join(own, "..", "package.json"), JSON.stringify({ name: platformPackage(), version: "1.2.3" }));
  writeFileSync(join(own, "hookwire"), '#!/bin/sh\necho "nested: $*"\nexit 3\n', { mode: 0o755 });
  const n = spawnSync(process.execPath, [inner.bin, "doctor"], { encoding: "utf8" });
  assert.equal(n.status, 3, n.stderr);
  assert.equal(n.stdout, "nested: doctor\n");
});
