// `vsce package` makes a .vsix that holds what the extension needs at run
// time and nothing of its sources: unpacked, it activates on the fake
// vscode with only its own node_modules.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createFakeVscode } from "./fake-vscode.mjs";
import { COMMANDS, extDir, sandbox, waitFor } from "./helpers.mjs";

test("the .vsix holds the compiled extension and vscode-jsonrpc, and activates from where it is unpacked", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "hookwire-vsix-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const vsix = join(dir, "hookwire.vsix");
  execFileSync(join(extDir, "node_modules", ".bin", "vsce"), ["package", "--out", vsix], { cwd: extDir, stdio: ["ignore", "ignore", "inherit"] });
  execFileSync("unzip", ["-q", vsix, "-d", join(dir, "x")]);
  const root = join(dir, "x", "extension");

  const files = (d, prefix = "") =>
    readdirSync(join(root, d), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(d, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]));
  assert.deepEqual(files("dist").sort(), ["app.js", "entries.js", "extension.js", "host.js", "observer.js"]);
  assert.ok(existsSync(join(root, "node_modules", "vscode-jsonrpc", "lib", "node", "main.js")));
  assert.ok(!existsSync(join(root, "src")) && !existsSync(join(root, "test")), "no sources or tests");
  assert.deepEqual(readdirSync(join(root, "node_modules")), ["vscode-jsonrpc"], "no dev dependencies");

  const box = sandbox();
  const fake = createFakeVscode({ folders: [box.folder] });
  const require = createRequire(join(root, "package.json"));
  const Module = require("node:module");
  const load = Module._load;
  Module._load = function (request, ...rest) {
    return request === "vscode" ? fake.host : load.call(this, request, ...rest);
  };
  const saved = process.env.HOOKWIRE_BIN;
  process.env.HOOKWIRE_BIN = box.env.HOOKWIRE_BIN;
  try {
    const ext = require(join(root, require(join(root, "package.json")).main));
    ext.activate({ subscriptions: [] });
    assert.deepEqual([...fake.commands.keys()].sort(), Object.values(COMMANDS).sort());
    await waitFor(() => fake.statusBarItems[0].text === "hookwire: 0 resumable", 5000);
    await ext.deactivate();
  } finally {
    Module._load = load;
    process.env.HOOKWIRE_BIN = saved;
    if (saved === undefined) delete process.env.HOOKWIRE_BIN;
  }
});
