// The `./tui` entry on doubles of both TUI generations, with the real
// sidecar writing the project's state and the real observer reading it.
// OpenCode hands a TUI plugin its own @opentui/solid and solid-js; here a
// stand-in of each builds a plain tree (createElement/insert/setProp, the
// three calls the entry makes) so the test reads what the slot shows.
// OpenCode 1.x's api: @opencode-ai/plugin/tui (1.18.33) TuiPluginApi
// (slots.register with sidebar_content {session_id}, state.path,
// state.config.plugin, state.session.get, ui.toast, command.register,
// route, lifecycle). OpenCode 2's context: packages/plugin/src/tui/context.ts
// @ 003e53fb (ui.slot({append: "sidebar.content", render}) with input
// {sessionID}, ui.toast.show, ui.dialog.select, ui.router.navigate,
// data.session.get, keymap.layer).
import assert from "node:assert/strict";
import { test } from "node:test";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { realSidecar, scratch, shimDir, waitFor } from "./helpers.mjs";

const PARENT = "ses_tui_parent";
const CHILD = "ses_tui_child";

/** A directory where dist/tui.js imports the stand-ins; returns the loaded module. */
async function loadTui(dir) {
  const pkg = join(dir, "pkg");
  mkdirSync(join(pkg, "dist"), { recursive: true });
  copyFileSync(join(shimDir, "dist", "tui.js"), join(pkg, "dist", "tui.js"));
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "hookwire-opencode-tui-test", type: "module" }));
  const solid = join(pkg, "node_modules", "@opentui", "solid");
  mkdirSync(solid, { recursive: true });
  writeFileSync(join(solid, "package.json"), JSON.stringify({ name: "@opentui/solid", type: "module", main: "index.js" }));
  writeFileSync(
    join(solid, "index.js"),
    `export function createElement(tag) { return { tag, props: {}, children: [] }; }
export function setProp(node, k, v) { node.props[k] = v; return v; }
export const counts = { insert: 0 };
export function insert(node, child) {
  counts.insert++;
  if (child === null) node.children = [];
  else if (Array.isArray(child)) node.children.push(...child);
  else node.children.push(child);
}`,
  );
  const sjs = join(pkg, "node_modules", "solid-js");
  mkdirSync(sjs, { recursive: true });
  writeFileSync(join(sjs, "package.json"), JSON.stringify({ name: "solid-js", type: "module", main: "index.js" }));
  writeFileSync(join(sjs, "index.js"), "export const cleanups = []; export function onCleanup(fn) { cleanups.push(fn); }");
  const mod = await import(pathToFileURL(join(pkg, "dist", "tui.js")).href);
  const cleanups = (await import(pathToFileURL(join(sjs, "index.js")).href)).cleanups;
  const counts = (await import(pathToFileURL(join(solid, "index.js")).href)).counts;
  return { plugin: mod.default, mod, cleanups, counts };
}

/** The text a stand-in tree shows: a text node a line, hidden nodes left out. */
function textOf(node) {
  if (typeof node === "string") return node;
  if (!node || typeof node !== "object" || node.props?.visible === false) return "";
  const inner = node.children.map(textOf).join("");
  return node.tag === "text" ? `${inner}\n` : inner;
}

/** The server part makes exp-1 under PARENT in the project's state, as OpenCode's hooks would. */
async function delegate(s, project, options) {
  const server = (await import(pathToFileURL(join(shimDir, "dist", "server.js")).href)).default;
  const hooks = await server.server({ directory: project, worktree: project }, options);
  await hooks["chat.message"]({ sessionID: PARENT, agent: "orchestrator" }, { message: { id: "msg_u1", role: "user", sessionID: PARENT, agent: "orchestrator" }, parts: [{ type: "text", text: "hi" }] });
  const input = { tool: "task", sessionID: PARENT, callID: "call_1" };
  const out = { args: { description: "Map the config loader", prompt: "Read it.", subagent_type: "explorer" } };
  await hooks["tool.execute.before"](input, out);
  await hooks["tool.execute.after"]({ ...input, args: out.args }, { title: "", metadata: {}, output: `<task id="${CHILD}" state="completed">\n<task_result>\nok\n</task_result>\n</task>` });
  return hooks;
}

test("OpenCode 1.x: the sidebar section lists exp-1 with its label and state, a child's view names it, a typo'd option is on screen and toasted once ready, the jump command opens the child", async () => {
  const s = scratch();
  const project = join(s.dir, "project");
  mkdirSync(project, { recursive: true });
  process.env.XDG_STATE_HOME = join(s.dir, "xdg-state");
  const serverOptions = { binary: realSidecar(), logFile: s.log };
  const hooks = await delegate(s, project, serverOptions);
  const { plugin, cleanups } = await loadTui(s.dir);
  assert.equal(plugin.id, "hookwire");
  assert.equal(typeof plugin.tui, "function");

  const slots = [];
  const toasts = [];
  const commands = [];
  const navigated = [];
  const disposers = [];
  let dialog;
  const api = {
    state: {
      ready: false,
      path: { directory: project, worktree: project, state: "", config: "" },
      config: { plugin: [["hookwire-opencode", { ...serverOptions, cacheStabel: true }]] },
      session: { get: (id) => (id === CHILD ? { id, parentID: PARENT } : { id }) },
    },
    slots: { register: (p) => (slots.push(p), "hookwire-slot") },
    ui: {
      toast: (t) => toasts.push(t),
      dialog: { replace: (render) => (dialog = render()), clear: () => (dialog = undefined) },
      DialogSelect: (props) => ({ dialogSelect: props }),
    },
    route: { navigate: (name, params) => navigated.push({ name, params }), current: { name: "session", params: { sessionID: PARENT } } },
    command: { register: (cb) => (commands.push(cb), () => {}) },
    theme: { current: { textMuted: "muted" } },
    lifecycle: { onDispose: (fn) => disposers.push(fn) },
  };
  try {
    await plugin.tui(api, {}, {});
    assert.equal(slots.length, 1);
    assert.equal(typeof slots[0].slots.sidebar_content, "function");
    const parentView = slots[0].slots.sidebar_content({}, { session_id: PARENT });
    const shown = await waitFor(() => {
      const t = textOf(parentView);
      return t.includes("exp-1") ? t : undefined;
    }, 10000, 100);
    assert.match(shown, /^hookwire \S+: idle/m, "nothing runs");
    assert.match(shown, /✓ exp-1 explorer done/);
    assert.match(shown, /Map the config loader/);
    assert.match(shown, /cacheStabel: unknown member/, "the typo is on screen");

    const childView = slots[0].slots.sidebar_content({}, { session_id: CHILD });
    const child = await waitFor(() => {
      const t = textOf(childView);
      return t.includes("subagent exp-1") ? t : undefined;
    }, 10000, 100);
    assert.match(child, /subagent exp-1 \(explorer\)\n ✓ done/);
    assert.match(child, new RegExp(`parent ${PARENT}`));

    assert.equal(toasts.length, 0, "no toast while the TUI loads");
    api.state.ready = true;
    const toast = await waitFor(() => toasts[0], 5000, 50);
    assert.equal(toast.variant, "warning");
    assert.match(toast.message, /cacheStabel: unknown member, ignored \(did you mean "cacheStable"\?\)/);
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(toasts.length, 1, "toasted once");

    // The jump command: the aliases of the session, the chosen child opened.
    const cmd = commands[0]().find((c) => c.value === "hookwire.jump");
    assert.ok(cmd, "a palette command");
    assert.ok(commands[0]().find((c) => c.value === "hookwire.stop"), "and the stop command");
    cmd.onSelect();
    await waitFor(() => dialog, 5000, 20);
    const options = dialog.dialogSelect.options;
    assert.deepEqual(options.map((o) => o.value), [CHILD]);
    assert.match(options[0].title, /^exp-1 explorer done Map the config loader/);
    dialog.dialogSelect.onSelect(options[0]);
    await waitFor(() => navigated.length > 0, 5000, 20);
    assert.deepEqual(navigated, [{ name: "session", params: { sessionID: CHILD } }]);
  } finally {
    for (const fn of cleanups.splice(0)) fn();
    for (const fn of disposers) await fn();
    await hooks.dispose();
    s.cleanup();
  }
});

test("OpenCode 2: the section appends to sidebar.content and shows the same alias and state; the jump command opens the child; a model switch made after it looked is toasted once", async () => {
  const s = scratch();
  const project = join(s.dir, "project");
  mkdirSync(project, { recursive: true });
  process.env.XDG_STATE_HOME = join(s.dir, "xdg-state");
  const options = { binary: realSidecar(), logFile: s.log, agentModels: { explorer: { fallbackModels: ["fake/fake-model-2"] } } };
  const hooks = await delegate(s, project, options);
  const { plugin, cleanups } = await loadTui(s.dir);
  assert.equal(typeof plugin.setup, "function");

  const claims = [];
  const layers = [];
  const toasts = [];
  const navigated = [];
  const ctx = {
    options,
    location: { directory: project },
    ui: {
      slot: (claim) => (claims.push(claim), () => {}),
      toast: { show: (o) => toasts.push(o) },
      dialog: { select: async (o) => o.options.find((x) => x.value === CHILD)?.value },
      router: { navigate: (d) => navigated.push(d), current: () => ({ type: "session", sessionID: PARENT }) },
    },
    data: { session: { get: (id) => (id === CHILD ? { id, parentID: PARENT } : { id }) } },
    keymap: { layer: (input) => layers.push(input) },
  };
  const cleanup = await plugin.setup(ctx);
  try {
    assert.deepEqual(claims.map((c) => c.append), ["app", "sidebar.content"]);
    const view = claims[1].render({ sessionID: PARENT });
    claims[0].render({});
    const shown = await waitFor(() => {
      const t = textOf(view);
      return t.includes("exp-1") ? t : undefined;
    }, 10000, 100);
    assert.match(shown, /✓ exp-1 explorer done/);
    assert.equal(toasts.length, 0, "no warnings, no toast");
    assert.equal(layers.length, 1, "one keymap layer, from the app claim");
    const cmd = layers[0]().commands.find((c) => c.id === "hookwire.jump");
    assert.equal(cmd.palette, true);
    await cmd.run();
    assert.deepEqual(navigated, [{ type: "session", sessionID: CHILD }]);

    // The child's model is rate limited: the server part tells the sidecar
    // (model.failed), which moves it to its fallback and records the switch.
    await hooks["chat.message"]({ sessionID: CHILD, agent: "explorer", model: { providerID: "fake", modelID: "fake-model-3" } },
      { message: { id: "msg_c1", role: "user", sessionID: CHILD, agent: "explorer" }, parts: [{ type: "text", text: "go on" }] });
    await hooks.event({ event: { type: "session.status", properties: { sessionID: CHILD, status: { type: "retry", attempt: 1, message: "Rate limit reached for fake-model-3", next: Date.now() + 2000 } } } });
    const toast = await waitFor(() => toasts.find((t) => t.message.startsWith("exp-1:")), 10000, 100);
    // Asked for, not seen applied yet (no rescue prompt here): "switching to", not "now on" (PROTOCOL.md 4.8).
    assert.equal(toast.message, "exp-1: fake/fake-model-3 failed (rate-limit); switching to fake/fake-model-2");
    assert.equal(toast.variant, "info");
    await new Promise((r) => setTimeout(r, 1500)); // more changes
    assert.equal(toasts.filter((t) => t.message.startsWith("exp-1:")).length, 1, "toasted once");
  } finally {
    for (const fn of cleanups.splice(0)) fn();
    await cleanup();
    await hooks.dispose();
    s.cleanup();
  }
});


// --- the controller on a stand-in observer (test/fixtures/fake-observer.mjs) ---

const fakeObserver = join(shimDir, "test", "fixtures", "fake-observer.mjs");
const P = "ses_fake_parent";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const T = (input, output) => ({ input, output, reasoning: 0, cacheRead: 0, cacheWrite: 0 });
const doneRow = { sessionID: "ses_f1", parentID: P, depth: 1, alias: "exp-1", resumable: true, agent: "explore", label: "Find the tests", state: "done", startedAt: "2026-12-06T01:00:00Z", endedAt: "2026-12-06T01:00:30Z", model: "fake/fake-model-2", tokens: T(100, 20), cost: 0.002 };
const BAD = /[\x00-\x1f\x7f-\x9f\u061c\u200b\u200c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;

/** A world for the stand-in observer, its request log and its notification pipe. */
function fakeWorld(s, world) {
  const files = { world: join(s.dir, "world.json"), log: join(s.dir, "observer.log"), ctl: join(s.dir, "observer.ctl") };
  writeFileSync(files.world, JSON.stringify(world));
  writeFileSync(files.log, "");
  writeFileSync(files.ctl, "");
  process.env.FAKE_WORLD = files.world;
  process.env.FAKE_LOG = files.log;
  process.env.FAKE_CTL = files.ctl;
  return {
    set: (w) => writeFileSync(files.world, JSON.stringify(w)),
    notify: (method, params) => appendFileSync(files.ctl, JSON.stringify({ method, params }) + "\n"),
    requests: () => readFileSync(files.log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((r) => r.method),
    pid: () => JSON.parse(readFileSync(files.log, "utf8").split("\n")[0]).pid,
  };
}

/** OpenCode 1.x's TUI api double with events, a client and session statuses. */
function api1x(project, parents, extra = {}) {
  const rec = { slots: [], toasts: [], commands: [], navigated: [], disposers: [], events: new Map(), aborted: [], dialog: undefined };
  const api = {
    state: {
      ready: true,
      path: { directory: project },
      config: { plugin: [] },
      session: { get: (id) => (parents[id] ? { id, parentID: parents[id] } : { id }), status: (id) => (id.startsWith("ses_run") ? { type: "busy" } : { type: "idle" }) },
    },
    slots: { register: (p) => (rec.slots.push(p), "slot") },
    ui: { toast: (t) => rec.toasts.push(t), dialog: { replace: (render) => (rec.dialog = render()), clear: () => (rec.dialog = undefined) }, DialogSelect: (props) => ({ dialogSelect: props }) },
    route: { navigate: (name, params) => rec.navigated.push({ name, params }), current: { name: "session", params: { sessionID: P } } },
    command: { register: (cb) => (rec.commands.push(cb), () => {}) },
    lifecycle: { onDispose: (fn) => rec.disposers.push(fn) },
    event: { on: (type, fn) => (rec.events.set(type, [...(rec.events.get(type) ?? []), fn]), () => rec.events.set(type, (rec.events.get(type) ?? []).filter((f) => f !== fn))) },
    client: { session: { abort: async (p) => (rec.aborted.push(p), { data: true }) } },
    ...extra,
  };
  rec.emit = (type, properties) => {
    for (const fn of rec.events.get(type) ?? []) fn({ type, properties });
  };
  return { api, rec };
}

test("quiet at rest, drawn on change: no request and no redraw while nothing changes; a change named for another parent asks nothing; one named for the parent on screen, or OpenCode's event about its child, asks once", async () => {
  const s = scratch();
  const fake = fakeWorld(s, { parents: { [P]: { rows: [doneRow] } } });
  const { plugin, mod, cleanups, counts } = await loadTui(s.dir);
  const { api, rec } = api1x(s.dir, { ses_c_new: P });
  api.state.config.plugin = [["hookwire-opencode", { binary: fakeObserver }]];
  try {
    await plugin.tui(api, {});
    const view = rec.slots[0].slots.sidebar_content({}, { session_id: P });
    await waitFor(() => textOf(view).includes("exp-1") || undefined, 10000, 20);
    assert.equal(textOf(view), "hookwire 9.9.9: idle\nsubagents (1):\n ✓ exp-1 explore done 30s\n   Find the tests\n   fake-model-2 120 tok $0.0020\n");
    await sleep(300);
    const atRest = fake.requests().length;
    const drawn = counts.insert;
    const draws = mod.stats.draws;
    await sleep(1500);
    assert.equal(fake.requests().length, atRest, "no request at rest");
    assert.equal(counts.insert, drawn, "nothing drawn at rest");
    assert.equal(mod.stats.draws, draws, "no lines built at rest");

    fake.notify("subagents.changed", { parents: ["ses_not_on_screen"] });
    await sleep(400);
    assert.equal(fake.requests().length, atRest, "a parent not on screen costs nothing");

    const running = { ...doneRow, sessionID: "ses_c_new", alias: "gen-1", agent: "general", label: "Slow audit", state: "running", startedAt: new Date().toISOString(), endedAt: undefined };
    fake.set({ parents: { [P]: { rows: [running, doneRow] } } });
    fake.notify("subagents.changed", { parents: [P] });
    await waitFor(() => textOf(view).includes("~ gen-1 general running") || undefined, 5000, 20);
    const asked = fake.requests().slice(atRest);
    assert.deepEqual(asked, [{ method: "subagents.list", params: { sessionID: P, limit: 24 } }], "one page, no larger than the section");

    // OpenCode's own event about a child of the parent on screen.
    const before = fake.requests().length;
    rec.emit("session.status", { sessionID: "ses_c_new", status: { type: "idle" } });
    rec.emit("message.updated", { info: { sessionID: "ses_c_new", role: "assistant" } });
    await sleep(600);
    assert.equal(fake.requests().length, before + 1, "two events in a burst: one request");
    rec.emit("session.status", { sessionID: "ses_elsewhere", status: { type: "busy" } });
    await sleep(600);
    assert.equal(fake.requests().length, before + 1, "an event of a session not on screen: none");

    // Off screen: nothing more.
    for (const fn of cleanups.splice(0)) fn();
    const gone = fake.requests().length;
    fake.notify("subagents.changed", { parents: [P] });
    await sleep(400);
    assert.equal(fake.requests().length, gone, "no section on screen, no request");
  } finally {
    for (const fn of cleanups.splice(0)) fn();
    for (const fn of rec.disposers) await fn();
    s.cleanup();
  }
});

test("at any width (no section drawn): the jump command lists the subagents read when it runs, the stop command stops a running one through OpenCode's abort; 5,000 subagents are paged; hostile text never reaches a title", async () => {
  const s = scratch();
  const hostile = { ...doneRow, label: "evil\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\u202egnp.exe " + "漢".repeat(100), agent: "exp\u200blore" };
  const runRow = { ...doneRow, sessionID: "ses_run1", alias: "gen-1", agent: "general", label: "Slow audit", state: "running", startedAt: new Date().toISOString(), endedAt: undefined };
  const fake = fakeWorld(s, { parents: { [P]: { rows: [runRow], count: 5000, template: hostile } } });
  const { plugin, cleanups } = await loadTui(s.dir);
  const { api, rec } = api1x(s.dir, {});
  try {
    await plugin.tui(api, { binary: fakeObserver });
    const cmds = rec.commands[0]();
    assert.deepEqual(cmds.map((c) => c.value), ["hookwire.jump", "hookwire.stop"]);

    cmds[0].onSelect();
    const dialog = await waitFor(() => rec.dialog, 10000, 20);
    const options = dialog.dialogSelect.options;
    assert.equal(options.length, 1000, "five pages of 200: bounded");
    assert.equal(options[0].value, "ses_run1");
    for (const o of options) {
      assert.ok(!BAD.test(o.title), JSON.stringify(o.title));
      assert.ok(o.title.length <= 72 * 2);
    }
    assert.match(options[1].title, /^exp-1 explore done evilgnp\.exe 漢漢/);
    const lists = fake.requests().filter((r) => r.method === "subagents.list");
    assert.ok(lists.every((r) => r.params.limit === 200) && lists.length === 5, JSON.stringify(lists.map((r) => r.params)));
    dialog.dialogSelect.onSelect(options[0]);
    await waitFor(() => rec.navigated.length > 0 || undefined, 5000, 20);
    assert.deepEqual(rec.navigated, [{ name: "session", params: { sessionID: "ses_run1" } }]);

    rec.dialog = undefined;
    cmds[1].onSelect();
    const stop = await waitFor(() => rec.dialog, 10000, 20);
    assert.deepEqual(stop.dialogSelect.options.map((o) => o.value), ["ses_run1"], "only the running one");
    assert.equal(stop.dialogSelect.title, "hookwire: stop a running subagent");
    stop.dialogSelect.onSelect(stop.dialogSelect.options[0]);
    await waitFor(() => rec.aborted.length > 0 || undefined, 5000, 20);
    assert.deepEqual(rec.aborted, [{ sessionID: "ses_run1" }]);
    const told = await waitFor(() => rec.toasts.find((t) => /stopping/.test(t.message)), 5000, 20);
    assert.equal(told.message, "hookwire: stopping gen-1");

    // The section on screen: one page of 24, at most 24 lines, the rest counted.
    const before = fake.requests().length;
    const view = rec.slots[0].slots.sidebar_content({}, { session_id: P });
    await waitFor(() => textOf(view).includes("more") || undefined, 10000, 20);
    const lines = textOf(view).split("\n").filter(Boolean);
    assert.ok(lines.length <= 24, `${lines.length} lines`);
    assert.match(lines.at(-1), /^ \+\d+ more: ctrl\+p "hookwire"$/);
    for (const l of lines) assert.ok(!BAD.test(l), JSON.stringify(l));
    assert.deepEqual(fake.requests().slice(before).filter((r) => r.method === "subagents.list").map((r) => r.params), [{ sessionID: P, limit: 24 }]);
  } finally {
    for (const fn of cleanups.splice(0)) fn();
    for (const fn of rec.disposers) await fn();
    s.cleanup();
  }
});

test("where the host has no abort, the stop command says so; with no observer the jump command lists OpenCode's own children", async () => {
  const s = scratch();
  fakeWorld(s, { parents: {} });
  const { plugin, cleanups } = await loadTui(s.dir);
  const { api, rec } = api1x(s.dir, {}, { client: { session: { children: async ({ sessionID }) => ({ data: sessionID === P ? [{ id: "ses_k1", title: "Look around (@explore subagent)" }] : [] }) } } });
  try {
    await plugin.tui(api, { binary: join(s.dir, "no-such-binary") });
    const cmds = rec.commands[0]();
    cmds[1].onSelect();
    const t = await waitFor(() => rec.toasts.find((x) => /stop/.test(x.message)), 5000, 20);
    assert.equal(t.message, "hookwire: this OpenCode offers no call to stop a session");
    cmds[0].onSelect();
    const dialog = await waitFor(() => rec.dialog, 10000, 20);
    assert.deepEqual(dialog.dialogSelect.options.map((o) => [o.value, o.title]), [["ses_k1", "done Look around (@explore subagent)"]]);
  } finally {
    for (const fn of cleanups.splice(0)) fn();
    for (const fn of rec.disposers) await fn();
    s.cleanup();
  }
});

test("OpenCode 2: one keymap layer from the app claim however often the sidebar renders; the config's warnings toasted as on 1.x; stop interrupts; a switch toast is safe; the observer process ends with the plugin", async () => {
  const s = scratch();
  const runRow = { ...doneRow, sessionID: "ses_run2", alias: "x\x1b]0;t\x07y", state: "running", startedAt: new Date().toISOString(), endedAt: undefined };
  const fake = fakeWorld(s, { warnings: ['config: cacheStabel: unknown member, ignored (did you mean "cacheStable"?)'], parents: { [P]: { rows: [runRow] } } });
  const { plugin, cleanups } = await loadTui(s.dir);
  const claims = [];
  const layers = [];
  const toasts = [];
  const interrupted = [];
  const ctx = {
    options: { binary: fakeObserver },
    location: { directory: s.dir },
    ui: {
      slot: (claim) => (claims.push(claim), () => {}),
      toast: { show: (o) => toasts.push(o) },
      dialog: { select: async (o) => o.options[0]?.value },
      router: { navigate: () => {}, current: () => ({ type: "session", sessionID: P }) },
    },
    data: {
      on: (type, fn) => (handlers.set(type, fn), () => handlers.delete(type)),
      session: { get: (id) => (id === "ses_run2" ? { id, parentID: P } : { id }), status: () => "running" },
    },
    keymap: { layer: (input) => layers.push(input) },
    client: { session: { interrupt: async (p) => interrupted.push(p) } },
  };
  const handlers = new Map();
  const cleanup = await plugin.setup(ctx);
  try {
    const app = claims.find((c) => c.append === "app");
    const side = claims.find((c) => c.append === "sidebar.content");
    assert.ok(app && side);
    app.render({});
    const view = side.render({ sessionID: P });
    side.render({ sessionID: P });
    side.render({ sessionID: "ses_other" });
    assert.equal(layers.length, 1, "registered once, in the app claim");
    assert.deepEqual(layers[0]().commands.map((c) => [c.id, c.palette]), [["hookwire.jump", true], ["hookwire.stop", true]]);
    const warn = await waitFor(() => toasts.find((t) => t.variant === "warning"), 10000, 50);
    assert.match(warn.message, /cacheStabel: unknown member/);
    await waitFor(() => textOf(view).includes("running") || undefined, 10000, 20);
    await layers[0]().commands[1].run();
    assert.deepEqual(interrupted, [{ sessionID: "ses_run2" }]);

    // 2.2's execution events about a child of the parent on screen ask again (payloads under data).
    for (const t of ["session.execution.started", "session.execution.succeeded", "session.execution.failed", "session.execution.interrupted", "session.step.ended", "session.retry.scheduled"]) assert.ok(handlers.has(t), t);
    const n0 = fake.requests().length;
    handlers.get("session.execution.interrupted")({ type: "session.execution.interrupted", data: { sessionID: "ses_run2" } });
    await waitFor(() => fake.requests().length > n0 || undefined, 3000, 20);
    assert.deepEqual(fake.requests().at(-1), { method: "subagents.list", params: { sessionID: P, limit: 24 } });

    fake.set({ parents: { [P]: { rows: [{ ...runRow, switches: [{ from: "fake/a\x1b[2J", to: "fake/b\u202e", class: "rate-limit", at: new Date(Date.now() + 1000).toISOString() }] }] } } });
    fake.notify("subagents.changed", { parents: [P] });
    const sw = await waitFor(() => toasts.find((t) => t.variant === "info" && /now on/.test(t.message)), 5000, 20);
    assert.equal(sw.message, "xy: fake/a failed (rate-limit); now on fake/b");
    const pid = fake.pid();
    for (const fn of cleanups.splice(0)) fn();
    await cleanup();
    await waitFor(() => {
      try {
        process.kill(pid, 0);
        return undefined;
      } catch {
        return true;
      }
    }, 5000, 50);
  } finally {
    for (const fn of cleanups.splice(0)) fn();
    await cleanup();
    s.cleanup();
  }
});

test("OpenCode 1.x: a model's context window from the TUI's providers (TuiState.provider), by provider id and model id", async () => {
  const s = scratch();
  try {
    const { mod } = await loadTui(s.dir);
    const providers = [
      { id: "fake", models: { "fake-model": { limit: { context: 128000, output: 4096 } }, "no-limit": {} } },
      { id: "openrouter", models: { "anthropic/claude-x": { limit: { context: 200000 } } } },
    ];
    assert.equal(mod.contextLimitOf(providers, "fake/fake-model"), 128000);
    assert.equal(mod.contextLimitOf(providers, "openrouter/anthropic/claude-x"), 200000, "a model id with a slash");
    for (const model of ["fake/no-limit", "fake/other", "other/fake-model", "fake-model", "/fake-model", "fake/constructor"]) assert.equal(mod.contextLimitOf(providers, model), undefined, model);
    for (const bad of [undefined, null, {}, "x", [null, { id: "fake", models: null }]]) assert.equal(mod.contextLimitOf(bad, "fake/fake-model"), undefined);
    assert.equal(mod.contextLimitOf([{ id: "fake", models: { m: { limit: { context: "128000" } } } }], "fake/m"), undefined, "not a number");
  } finally {
    s.cleanup();
  }
});

test("the server part's options from each plugin list form: a name, [name, options], {package, options}", async () => {
  const s = scratch();
  try {
    const { mod } = await loadTui(s.dir);
    const o = { binary: "/x/hookwire" };
    assert.deepEqual(mod.serverOptions(["other", ["hookwire-opencode", o]]), o);
    assert.deepEqual(mod.serverOptions([{ package: "other", options: {} }, { package: "hookwire-opencode@1.4.0", options: o }]), o);
    assert.deepEqual(mod.serverOptions([{ package: "hookwire-opencode" }]), {});
    assert.deepEqual(mod.serverOptions(["hookwire-opencode"]), {});
    assert.equal(mod.serverOptions([{ package: "other" }]), undefined);
    assert.equal(mod.serverOptions(undefined), undefined);
  } finally {
    s.cleanup();
  }
});

test("an observer that keeps dying: the section says the observer is down, without a timer at rest", async () => {
  const s = scratch();
  const fake = fakeWorld(s, { parents: { [P]: { rows: [doneRow] } } });
  process.env.FAKE_DIE = "1";
  const { plugin, mod, cleanups } = await loadTui(s.dir);
  const { api, rec } = api1x(s.dir, {});
  try {
    await plugin.tui(api, { binary: fakeObserver });
    const view = rec.slots[0].slots.sidebar_content({}, { session_id: P });
    await waitFor(() => /^hookwire: down \(observer gone\)$/m.test(textOf(view)) || undefined, 10000, 20);
    const starts = fake.requests().filter((r) => r.method === "initialize").length;
    assert.equal(starts, 3, "given up after three crashes");
    const draws = mod.stats.draws;
    await sleep(1000);
    assert.equal(mod.stats.draws, draws, "nothing redrawn while it is down");
  } finally {
    delete process.env.FAKE_DIE;
    for (const fn of cleanups.splice(0)) fn();
    for (const fn of rec.disposers) await fn();
    s.cleanup();
  }
});
