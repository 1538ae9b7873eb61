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
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
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
export function insert(node, child) {
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
  return { plugin: mod.default, cleanups };
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
    assert.equal(toast.message, "exp-1: fake/fake-model-3 failed (rate-limit); now on fake/fake-model-2");
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

