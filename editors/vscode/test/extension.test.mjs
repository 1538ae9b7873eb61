// The extension on a fake vscode (fake-vscode.mjs), with the real observer
// watching the state file a real `hookwire serve --state F` writes: the
// tree, the status-bar item, each command's effect, live refresh, restart
// after the observer is killed, and a clean dispose.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { after, test } from "node:test";
import { createFakeVscode, renderTree, treeNodes } from "./fake-vscode.mjs";
import { alive, COMMANDS, sandbox, Serving, start, VIEW_ID, waitFor, watchedFile } from "./helpers.mjs";

const cleanups = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** The extension on one folder, with a serving sidecar on the file its observer watches. */
async function running(opts = {}) {
  const box = sandbox();
  const ext = start({ folders: [box.folder], env: box.env, ...opts });
  cleanups.push(() => ext.app.dispose());
  await waitFor(() => ext.app.observers[0]?.state === "ready");
  const stateFile = await watchedFile(ext.app.observers[0]);
  const serving = await Serving.start(stateFile, box.env);
  cleanups.push(() => serving.close());
  return { ...ext, box, serving, stateFile };
}

/** The tree's lines without the ages, which depend on the clock. */
const shape = async (view) => (await renderTree(view.provider)).replace(/ · (now|\d+[smhd])\b/g, "");

test("the tree groups by parent session, then agent; the status bar counts the resumable sessions", async () => {
  const { status, view, serving } = await running();
  assert.equal(status().text, "hookwire: 0 resumable");
  assert.equal(status().visible, true);
  assert.equal(status().command, COMMANDS.showStatus);
  assert.match(view().message, /No remembered subagent sessions yet/);

  await serving.delegate("ses_parentA", "explorer", "ses_childA1", "Map the repo");
  await serving.delegate("ses_parentA", "oracle", "ses_childA2", "Review the plan");
  await serving.delegate("ses_parentB", "explorer", "ses_childB1", "Find the tests");
  await serving.delegate("ses_parentA", "explorer", "ses_childA3", "Map the docs");
  await waitFor(() => status().text === "hookwire: 4 resumable", 3000);

  assert.equal(view().message, undefined);
  assert.equal(
    await shape(view()),
    [
      "▾ ses_parentA  3 sessions",
      "  ▾ explorer  2",
      "    ✓ exp-2  Map the docs · completed",
      "    ✓ exp-1  Map the repo · completed",
      "  ▾ oracle  1",
      "    ✓ ora-1  Review the plan · completed",
      "▾ ses_parentB  1 session",
      "  ▾ explorer  1",
      "    ✓ exp-1  Find the tests · completed",
    ].join("\n"),
  );
  const sessions = (await treeNodes(view().provider)).filter((n) => n.node.kind === "session");
  assert.deepEqual(
    sessions.map((n) => [n.item.id, n.item.contextValue]),
    [
      ["s:ses_parentA:explorer:ses_childA3", "hookwire.session"],
      ["s:ses_parentA:explorer:ses_childA1", "hookwire.session"],
      ["s:ses_parentA:oracle:ses_childA2", "hookwire.session"],
      ["s:ses_parentB:explorer:ses_childB1", "hookwire.session"],
    ],
  );
  assert.match(sessions[0].item.tooltip, /^session: ses_childA3$/m);
});

test("an alias created through hookwire serve reaches the tree within 2 s, without a manual refresh", async () => {
  const { status, view, serving } = await running();
  let fired = 0;
  view().provider.onDidChangeTreeData(() => fired++);
  const before = Date.now();
  await serving.delegate("ses_live", "librarian", "ses_lib1", "Read the docs");
  await waitFor(async () => (await renderTree(view().provider)).includes("lib-1  Read the docs"), 2000);
  const took = Date.now() - before;
  assert.ok(fired > 0);
  assert.equal(status().text, "hookwire: 1 resumable");
  // A second one, later, arrives the same way.
  await serving.delegate("ses_live", "librarian", "ses_lib2", "Read more docs");
  await waitFor(async () => (await renderTree(view().provider)).includes("lib-2  Read more docs"), 2000);
  assert.equal(status().text, "hookwire: 2 resumable");
  process.stderr.write(`# first alias in the tree after ${took} ms\n`);
});

test("a resumed session shows as running, then as failed with the task's error", async () => {
  const { status, view, serving } = await running();
  await serving.delegate("ses_p", "explorer", "ses_c1", "Map the repo");
  await waitFor(() => status().text === "hookwire: 1 resumable", 3000);
  const line = async () => (await renderTree(view().provider)).split("\n").find((l) => l.includes("exp-1"));
  const callID = await serving.resume("ses_p", "explorer", "exp-1", "Map it again");
  await waitFor(async () => (await line())?.includes("running"), 2000);
  assert.match(await line(), /^ {4}↻ exp-1  Map the repo · running · now$/);
  await serving.failTask("ses_p", callID, "Rate limit exceeded");
  await waitFor(async () => (await line())?.includes("error"), 2000);
  assert.match(await line(), /^ {4}✗ exp-1  Map the repo · error · now$/);
  const item = (await treeNodes(view().provider)).find((n) => n.item.label === "exp-1").item;
  assert.match(item.tooltip, /^last run: error: Rate limit exceeded$/m);
  assert.equal(status().text, "hookwire: 1 resumable");
});

test("copy alias and copy session id: from the tree's node, the selection, or a pick", async () => {
  let offered;
  const { fake, view, status, serving } = await running({
    pick: (items) => {
      offered = items.map((i) => i.label);
      return items.find((i) => i.label === "ora-1");
    },
  });
  await serving.delegate("ses_p", "explorer", "ses_c1", "Map the repo");
  await serving.delegate("ses_p", "oracle", "ses_c2", "Review");
  await waitFor(() => status().text === "hookwire: 2 resumable", 3000);
  const nodes = (await treeNodes(view().provider)).filter((n) => n.node.kind === "session");
  const exp = nodes.find((n) => n.item.label === "exp-1").node;

  assert.equal(await fake.run(COMMANDS.copyAlias, exp), "exp-1");
  assert.equal(fake.clipboard.text, "exp-1");
  assert.deepEqual(fake.statusMessages.at(-1), { text: "hookwire: copied exp-1", ms: 3000 });
  await fake.run(COMMANDS.copySessionId, exp);
  assert.equal(fake.clipboard.text, "ses_c1");

  // From the command palette: the tree's selection...
  view().selection = [exp];
  await fake.run(COMMANDS.copySessionId);
  assert.equal(fake.clipboard.text, "ses_c1");
  // ...or, with nothing selected, what the user picks.
  view().selection = [];
  await fake.run(COMMANDS.copyAlias);
  assert.deepEqual(offered, ["ora-1", "exp-1"]);
  assert.equal(fake.clipboard.text, "ora-1");
  // A parent node is not a session: the pick decides.
  const parentNode = (await treeNodes(view().provider))[0].node;
  await fake.run(COMMANDS.copySessionId, parentNode);
  assert.equal(fake.clipboard.text, "ses_c2");
  assert.equal(fake.quickPicks.length, 2);
});

test("a pick dismissed copies nothing; with no sessions there is nothing to pick", async () => {
  const { fake, status, serving } = await running({ pick: () => undefined });
  fake.clipboard.text = "before";
  await fake.run(COMMANDS.copyAlias);
  assert.equal(fake.quickPicks.length, 0);
  assert.deepEqual(fake.statusMessages.at(-1), { text: "hookwire: no remembered sessions", ms: 3000 });
  await serving.delegate("ses_p", "explorer", "ses_c1", "Map");
  await waitFor(() => status().text === "hookwire: 1 resumable", 3000);
  await fake.run(COMMANDS.copyAlias);
  assert.equal(fake.quickPicks.length, 1);
  assert.equal(fake.clipboard.text, "before");
});

test("open in an OpenCode terminal runs opencode --session <id> in the project folder", async () => {
  const { fake, view, status, serving, box } = await running({ config: { "hookwire.opencodeBinary": "/opt/oc/bin/opencode" } });
  await serving.delegate("ses_p", "explorer", "ses_c1", "Map");
  await waitFor(() => status().text === "hookwire: 1 resumable", 3000);
  const node = (await treeNodes(view().provider)).find((n) => n.node.kind === "session").node;
  await fake.run(COMMANDS.openInTerminal, node);
  assert.equal(fake.terminals.length, 1);
  const term = fake.terminals[0];
  assert.deepEqual(term.options, { name: "OpenCode exp-1", cwd: box.folder });
  assert.deepEqual(term.sent, [{ text: "/opt/oc/bin/opencode --session ses_c1", exec: true }]);
  assert.equal(term.shown, 1);
});

test("show status writes each folder's observer and its status to the output channel", async () => {
  const { fake, app, box, stateFile } = await running();
  const text = await fake.run(COMMANDS.showStatus);
  const out = fake.outputChannels[0];
  assert.equal(out.name, "hookwire");
  assert.equal(out.shown, 1);
  assert.ok(out.lines.join("\n").includes(text));
  assert.match(text, new RegExp(`^== proj \\(${box.folder}\\)$`, "m"));
  assert.match(text, new RegExp(`^observer: ready, pid ${app.observers[0].pid}, started 1 time$`, "m"));
  const json = JSON.parse(text.slice(text.indexOf("{")));
  assert.equal(json.stateFile.path, stateFile);
});

test("killed, the observer is restarted; the view marks it down meanwhile and catches up after", async () => {
  const { app, status, view, serving } = await running();
  await serving.delegate("ses_p", "explorer", "ses_c1", "Before the crash");
  await waitFor(() => status().text === "hookwire: 1 resumable", 3000);
  const obs = app.observers[0];
  const first = obs.pid;
  const texts = [];
  const seen = setInterval(() => texts.push(status().text), 5);
  process.kill(first, "SIGKILL");
  await waitFor(() => obs.state === "restarting");
  // What was seen stays on screen, marked as not live.
  assert.equal(status().text, "hookwire: 1 resumable $(warning)");
  assert.match(status().tooltip, /proj: restarting: exited on SIGKILL/);
  await serving.delegate("ses_p", "explorer", "ses_c2", "While it was down");
  await waitFor(() => obs.state === "ready" && obs.pid !== first, 5000);
  await waitFor(() => status().text === "hookwire: 2 resumable", 3000);
  clearInterval(seen);
  assert.ok(texts.includes("hookwire: 1 resumable $(warning)"));
  assert.equal(alive(first), false);
  assert.match(await renderTree(view().provider), /exp-2  While it was down/);
});

test("a missing binary: one error message naming the setting, and the status bar says so", async () => {
  const box = sandbox();
  const env = { ...box.env, HOOKWIRE_BIN: "" };
  const ext = start({ folders: [box.folder], env, config: { "hookwire.binary": `${box.dir}/nope/hookwire` } });
  cleanups.push(() => ext.app.dispose());
  await waitFor(() => ext.app.observers[0].starts >= 3, 3000);
  assert.equal(ext.fake.errors.length, 1);
  assert.match(ext.fake.errors[0], /^hookwire: the observer did not start: cannot start .*nope\/hookwire: spawn .*ENOENT\. It needs a hookwire with the observe command: install one, or set "hookwire.binary" to its path\.$/);
  assert.equal(ext.status().text, "hookwire: 0 resumable $(warning)");
  assert.match(ext.view().message, /hookwire observe is not running: cannot start/);

  // Pointing the setting at a real one starts it.
  ext.fake.setConfig("hookwire.binary", box.env.HOOKWIRE_BIN);
  await waitFor(() => ext.app.observers[0]?.state === "ready", 5000);
  assert.equal(ext.status().text, "hookwire: 0 resumable");
  assert.equal(ext.fake.errors.length, 1);
});

test("a hookwire without the observe command: the error quotes what it said", async () => {
  const box = sandbox();
  const old = join(box.dir, "old-hookwire");
  writeFileSync(old, `#!/bin/sh\necho 'hookwire: unknown command "observe"' >&2\nexit 2\n`, { mode: 0o755 });
  const ext = start({ folders: [box.folder], env: { ...box.env, HOOKWIRE_BIN: old } });
  cleanups.push(() => ext.app.dispose());
  await waitFor(() => ext.fake.errors.length === 1 && ext.app.observers[0].starts >= 2, 3000);
  assert.equal(
    ext.fake.errors[0],
    'hookwire: the observer did not start: exited with code 2: hookwire: unknown command "observe". It needs a hookwire with the observe command: install one, or set "hookwire.binary" to its path.',
  );
  assert.ok(ext.fake.outputChannels[0].lines.includes('[proj] hookwire: unknown command "observe"'));
});

test("workspace folders: none hides the status bar; each folder gets its own observer", async () => {
  const box = sandbox();
  const ext = start({ folders: [], env: box.env });
  cleanups.push(() => ext.app.dispose());
  assert.equal(ext.status().visible, false);
  assert.match(ext.view().message, /Open a folder/);
  const second = box.project("second");
  ext.fake.setFolders([box.folder, second]);
  await waitFor(() => ext.app.observers.length === 2 && ext.app.observers.every((o) => o.state === "ready"));
  assert.deepEqual(ext.app.observers.map((o) => o.project), [box.folder, second]);
  assert.equal(ext.status().visible, true);
  const pids = ext.app.observers.map((o) => o.pid);
  ext.fake.setFolders([second]);
  await waitFor(() => !alive(pids[0]));
  assert.deepEqual(ext.app.observers.map((o) => o.pid), [pids[1]]);
});

test("dispose stops every observer and unregisters every command; context.subscriptions does the same", async () => {
  const { fake, app, context, status, view } = await running();
  const pid = app.observers[0].pid;
  assert.equal(fake.commands.size, 5);
  for (const d of context.subscriptions) d.dispose();
  await app.dispose();
  assert.equal(alive(pid), false);
  assert.equal(fake.commands.size, 0);
  assert.equal(status().disposed, true);
  assert.equal(view().disposed, true);
  assert.equal(fake.outputChannels[0].disposed, true);
});

test("extension.js wires activate and deactivate to the vscode module", async () => {
  const box = sandbox();
  const fake = createFakeVscode({ folders: [box.folder] });
  const require = createRequire(import.meta.url);
  const Module = require("node:module");
  const load = Module._load;
  Module._load = function (request, ...rest) {
    return request === "vscode" ? fake.host : load.call(this, request, ...rest);
  };
  const saved = process.env.HOOKWIRE_BIN;
  process.env.HOOKWIRE_BIN = box.env.HOOKWIRE_BIN;
  try {
    const ext = require("../dist/extension.js");
    const context = { subscriptions: [], extension: { packageJSON: { version: "0.1.0" } } };
    ext.activate(context);
    assert.deepEqual([...fake.commands.keys()].sort(), Object.values(COMMANDS).sort());
    assert.ok(fake.treeViews.has(VIEW_ID));
    await waitFor(() => fake.statusBarItems[0].text === "hookwire: 0 resumable");
    await ext.deactivate();
    assert.equal(fake.commands.size, 0);
  } finally {
    Module._load = load;
    process.env.HOOKWIRE_BIN = saved;
    if (saved === undefined) delete process.env.HOOKWIRE_BIN;
  }
});

test("package.json declares every command, the view and the settings the code uses", async () => {
  const require = createRequire(import.meta.url);
  const pkg = require("../package.json");
  const declared = pkg.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual(declared, Object.values(COMMANDS).sort());
  assert.deepEqual(pkg.contributes.views.explorer.map((v) => [v.id, v.name]), [[VIEW_ID, "Subagent Sessions"]]);
  assert.deepEqual(Object.keys(pkg.contributes.configuration.properties).sort(), ["hookwire.binary", "hookwire.opencodeBinary"]);
  for (const [key, p] of Object.entries(pkg.contributes.configuration.properties)) {
    assert.equal(p.type, "string", key);
    assert.ok(p.markdownDescription, key);
  }
});
