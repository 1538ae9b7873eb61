// The per-project state database (PROTOCOL.md 6): the shim passes
// `--project <OpenCode's project directory>` by default and the sidecar
// derives `$XDG_STATE_HOME/hookwire/<key>.db` from it, so aliases survive
// an OpenCode restart and are shared by every OpenCode on the project. The
// key is the one earlier shims computed themselves (checked here against
// that rule, written out in sha16 below), so an upgrading user's
// `<key>.json` is found and imported. Every test points HOME and
// XDG_STATE_HOME at a temp dir.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { createHookwire, stateFileWarning, stateFileWarnings } from "../dist/plugin.js";
import { projectDir, resolveSettings } from "../dist/options.js";
import { alive, fakeClient, fakeSidecar, realSidecar, scratch, waitFor } from "./helpers.mjs";

const PARENT = "ses_parent000000000000000001";
const CHILD = "ses_child0000000000000000001";
const AGENTS = [{ name: "explorer", mode: "subagent" }, { name: "oracle", mode: "subagent" }];

const scratches = [];
const instances = [];
after(async () => {
  for (const h of instances) await h.dispose();
  for (const s of scratches) s.cleanup();
});

/** A temp dir with its own HOME, XDG_STATE_HOME (not created yet) and project directories. */
function sandbox() {
  const s = scratch();
  scratches.push(s);
  const home = join(s.dir, "home");
  mkdirSync(home);
  const env = { ...process.env, HOME: home, XDG_STATE_HOME: join(s.dir, "xdg", "state") };
  const project = (name) => {
    const dir = join(s.dir, "projects", name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  return { s, env, home, stateDir: join(s.dir, "xdg", "state", "hookwire"), project };
}

const sha16 = (p) => createHash("sha256").update(p).digest("hex").slice(0, 16);
/** The state database: <dir>/<base name>-<sha256[:16] of the path>.db, the key earlier shims gave their .json (names here need no reduction). */
const oldRule = (stateDir, dir) => join(stateDir, `${dir.split("/").at(-1)}-${sha16(dir)}.db`);
/** The state file the running sidecar uses. */
const stateFileOf = async (h) => (await h.sidecar.request("status", {}, 4000)).result.stateFile;

/** One OpenCode instance on project dir, with the real sidecar. */
async function open(box, dir, options = {}, { trace = join(box.s.dir, "trace.jsonl") } = {}) {
  const fc = fakeClient({ agents: AGENTS });
  const h = createHookwire(
    { client: fc.client, directory: dir, worktree: dir },
    { binary: realSidecar(), trace, logFile: join(box.s.dir, "sidecar.log"), timeoutMs: 2000, transformTimeoutMs: 4000, ...options },
    box.env,
  );
  instances.push(h);
  await waitFor(() => h.sidecar.state === "ready", 10_000);
  return { h, logs: fc.logs, toasts: fc.toasts };
}

async function close(h) {
  const pid = h.sidecar.pid;
  await h.dispose();
  await waitFor(() => !alive(pid), 3000);
}

/** The orchestrator delegates to explorer; OpenCode's task tool answers with the child session. */
async function delegate(h) {
  await h.hooks["chat.message"](
    { sessionID: PARENT, agent: "orchestrator" },
    { message: { id: "msg_u1", role: "user", sessionID: PARENT, agent: "orchestrator" }, parts: [{ type: "text", text: "hi" }] },
  );
  const input = { tool: "task", sessionID: PARENT, callID: "call_1" };
  const out = { args: { description: "Explore the repo", prompt: "List files.", subagent_type: "explorer" } };
  await h.hooks["tool.execute.before"](input, out);
  await h.hooks["tool.execute.after"](
    { ...input, args: out.args },
    { title: "Explore the repo", metadata: {}, output: `<task id="${CHILD}" state="completed">\n<task_result>\nok\n</task_result>\n</task>` },
  );
}

/** The orchestrator resumes "exp-1": what task_id reaches OpenCode's task tool. */
async function resume(h) {
  const args = { description: "Resume", prompt: "Again.", subagent_type: "explorer", task_id: "exp-1" };
  await h.hooks["tool.execute.before"]({ tool: "task", sessionID: PARENT, callID: "call_2" }, { args });
  return args.task_id;
}

function spawnArgs(trace) {
  return readFileSync(trace, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((r) => r.ev === "spawn")
    .map((r) => r.args);
}

test("the project directory: worktree, else directory (OpenCode's worktree outside git is /)", () => {
  assert.equal(projectDir({ worktree: "/repo", directory: "/repo/sub" }), "/repo");
  assert.equal(projectDir({ worktree: "/", directory: "/tmp/notgit" }), "/tmp/notgit");
  assert.equal(projectDir({ directory: "/tmp/d" }), "/tmp/d");
  assert.equal(projectDir({ worktree: "", directory: "/tmp/d" }), "/tmp/d");
  assert.equal(projectDir({}), undefined);
  assert.equal(projectDir(undefined), undefined);
});

test("options: state false / a path / --state in args; never sent to the sidecar", () => {
  const env = { HOME: "/home/u", XDG_STATE_HOME: "/x/state" };
  const project = { worktree: "/repo", directory: "/repo/sub" };
  const dflt = resolveSettings({ subagents: [] }, env, project);
  assert.equal(dflt.project, "/repo");
  assert.equal(dflt.state, null);
  assert.equal(dflt.stateSource, "default");
  for (const off of [false, null, ""]) {
    const s = resolveSettings({ state: off }, env, project);
    assert.equal(s.state, null);
    assert.equal(s.project, null);
    assert.equal(s.stateSource, "off");
    assert.deepEqual(s.config, {});
  }
  const file = resolveSettings({ state: "/elsewhere/s.json", timeoutMs: 5 }, env, project);
  assert.equal(file.state, "/elsewhere/s.json");
  assert.equal(file.stateSource, "option");
  assert.deepEqual(file.config, {});
  const rel = resolveSettings({ state: "state.json" }, env, project);
  assert.equal(rel.state, "/repo/state.json", "a relative path is taken from the project directory");
  const viaArgs = resolveSettings({ args: ["--state", "/a/s.json"], state: "/b/s.json" }, env, project);
  assert.equal(viaArgs.state, null, "an explicit --state in args wins; the shim adds none");
  assert.equal(viaArgs.stateSource, "args");
  assert.equal(resolveSettings({ args: ["--state=/a/s.json"] }, env, project).stateSource, "args");
  assert.equal(resolveSettings({ args: ["--project", "/x"] }, env, project).project, null, "a --project of the user's own wins");
  assert.equal(resolveSettings({}, env, {}).stateSource, "no-project");
  assert.equal(resolveSettings({}, env, {}).state, null);
});

test("default: the sidecar gets --project DIR and keeps the database under the key earlier shims used (directory 0700, file 0600)", async () => {
  const box = sandbox();
  const dir = box.project("alpha");
  assert.equal(existsSync(box.stateDir), false);
  const trace = join(box.s.dir, "trace-default.jsonl");
  const { h } = await open(box, dir, {}, { trace });
  assert.deepEqual(spawnArgs(trace), [["--project", dir]]);
  const want = oldRule(box.stateDir, dir);
  assert.deepEqual(await stateFileOf(h), { mode: "persistent", path: want }, "an upgrading user's file");
  assert.equal(statSync(box.stateDir).mode & 0o777, 0o700);
  await delegate(h);
  await close(h);
  assert.ok(existsSync(want), "state file written at exit");
  assert.equal(statSync(want).mode & 0o777, 0o600);
  assert.match(readFileSync(want, "utf8"), new RegExp(CHILD));
});

test("OpenCode in a subdirectory of a git repository: the worktree's file, the same as from its top level", async () => {
  const box = sandbox();
  const repo = box.project("repo");
  mkdirSync(join(repo, ".git"));
  const sub = join(repo, "pkg", "sub");
  mkdirSync(sub, { recursive: true });
  // OpenCode reports worktree = the git top level; the sidecar finds the same top level from the directory alone.
  for (const input of [{ worktree: repo, directory: sub }, { worktree: "/", directory: sub }]) {
    const fc = fakeClient({ agents: AGENTS });
    const h = createHookwire({ client: fc.client, ...input }, { binary: realSidecar(), logFile: null, timeoutMs: 2000, transformTimeoutMs: 4000 }, box.env);
    instances.push(h);
    await waitFor(() => h.sidecar.state === "ready", 10_000);
    assert.equal((await stateFileOf(h)).path, oldRule(box.stateDir, repo), JSON.stringify(input));
    await close(h);
  }
});

test("two project directories get two state files", async () => {
  const box = sandbox();
  const a = box.project("one/app");
  const b = box.project("two/app");
  const ha = (await open(box, a)).h;
  const hb = (await open(box, b)).h;
  assert.notEqual((await stateFileOf(ha)).path, (await stateFileOf(hb)).path);
  await delegate(ha);
  await delegate(hb);
  await close(ha);
  await close(hb);
  assert.deepEqual(readdirSync(box.stateDir).filter((f) => f.endsWith(".db")).sort(), [
    `app-${sha16(a)}.db`,
    `app-${sha16(b)}.db`,
  ].sort());
});

test("an alias survives OpenCode's restart: dispose, a new plugin instance on the same project resolves exp-1", async () => {
  const box = sandbox();
  const dir = box.project("restart");
  const first = (await open(box, dir)).h;
  await delegate(first);
  assert.equal(await resume(first), CHILD, "resolved in the first sidecar");
  await close(first);

  const second = (await open(box, dir)).h;
  assert.notEqual(second.sidecar.pid, undefined);
  assert.equal(await resume(second), CHILD, "exp-1 rewritten to the real id by a fresh sidecar");
  await close(second);
});

test("an alias survives a killed sidecar (kill -9): it was committed before the hook returned", async () => {
  const box = sandbox();
  const dir = box.project("killed");
  const { h } = await open(box, dir);
  await delegate(h);
  const victim = h.sidecar.pid;
  process.kill(victim, "SIGKILL");
  await waitFor(() => h.sidecar.pid !== victim && h.sidecar.state === "ready", 5000);
  assert.equal(await resume(h), CHILD);
  await close(h);
});

test("state: false passes no --state: nothing is written and the alias is gone after a restart", async () => {
  const box = sandbox();
  const dir = box.project("nostate");
  const trace = join(box.s.dir, "trace-off.jsonl");
  const first = (await open(box, dir, { state: false }, { trace })).h;
  assert.deepEqual(spawnArgs(trace), [[]]);
  const status = await first.sidecar.request("status", {}, 4000);
  assert.equal(status.result.state, "memory");
  await delegate(first);
  await close(first);
  assert.equal(existsSync(box.stateDir) && readdirSync(box.stateDir).some((f) => f.endsWith(".db")), false);
  const second = (await open(box, dir, { state: false })).h;
  assert.notEqual(await resume(second), CHILD);
  await close(second);
});

test('state: "<path>" uses that file', async () => {
  const box = sandbox();
  const file = join(box.s.dir, "custom", "mine.db");
  const dir = box.project("custom");
  const trace = join(box.s.dir, "trace-custom.jsonl");
  const { h } = await open(box, dir, { state: file }, { trace });
  assert.deepEqual(spawnArgs(trace), [["--state", file]]);
  await delegate(h);
  await close(h);
  assert.ok(existsSync(file));
  assert.equal(existsSync(box.stateDir) && readdirSync(box.stateDir).some((f) => f.endsWith(".db")), false);
});

test("two OpenCodes on the same project share its database: an alias made in one resolves in the other, and nobody is warned", async () => {
  const box = sandbox();
  const dir = box.project("shared");
  const first = (await open(box, dir)).h;
  const { h: second, logs, toasts } = await open(box, dir);
  assert.equal(second.settings.project, first.settings.project);
  for (const h of [first, second]) {
    const status = await h.sidecar.request("status", {}, 4000);
    assert.deepEqual([status.result.stateFile.mode, status.result.stateFile.path], ["persistent", oldRule(box.stateDir, dir)]);
  }
  await delegate(first);
  assert.equal(await resume(second), CHILD, "the second sidecar resolves the first's alias");
  assert.equal(logs.filter((l) => l.message.includes("state file")).length, 0);
  assert.equal(toasts.length, 0);
  await close(second);
  await close(first);
});

test("stateFileWarning: stateFile.mode decides; the state text only when stateFile is absent (an older sidecar)", () => {
  const rows = [
    { name: "memory-only with path and reason", status: { stateFile: { mode: "memory-only", path: "/s/a.json", reason: "locked by another process" } }, want: /memory only \(\/s\/a\.json: locked by another process\)$/ },
    { name: "read-only with path and reason", status: { stateFile: { mode: "read-only", path: "/s/a.db", reason: "cannot write /s" } }, want: /^hookwire: state file is read-only: its aliases resolve, new ones last until OpenCode exits \(\/s\/a\.db: cannot write \/s\)$/ },
    { name: "persistent with a warning", status: { stateFile: { mode: "persistent", path: "/s/a.db", warnings: ["state directory /s is writable by others"] } }, want: /^hookwire: state directory \/s is writable by others$/ },
    { name: "memory-only, no detail", status: { stateFile: { mode: "memory-only" } }, want: /memory only$/ },
    { name: "persistent", status: { stateFile: { mode: "persistent", path: "/s/a.json" } }, want: undefined },
    { name: "none (no --state)", status: { stateFile: { mode: "none" } }, want: undefined },
    { name: "closed", status: { stateFile: { mode: "closed", path: "/s/a.json" } }, want: undefined },
    { name: "persistent wins over a memory-only text", status: { stateFile: { mode: "persistent" }, state: "memory-only: stale" }, want: undefined },
    { name: "older sidecar: memory-only text", status: { state: "memory-only: locking a.lock: locked by another process" }, want: /memory only \(memory-only: locking a\.lock: locked by another process\)$/ },
    { name: "older sidecar: persistent text", status: { state: "persistent: /s/a.json" }, want: undefined },
    { name: "not an object", status: "memory-only", want: undefined },
    { name: "null", status: null, want: undefined },
  ];
  for (const r of rows) {
    const got = stateFileWarning(r.status);
    if (r.want === undefined) assert.equal(got, undefined, r.name);
    else assert.match(got ?? "", r.want, r.name);
  }
  // Each is told under its own key, so a warning does not hide a mode.
  const both = stateFileWarnings({ stateFile: { mode: "read-only", reason: "r", warnings: ["w1", "w2"] } });
  assert.deepEqual(both.map((w) => w.key), ["state-read-only", "state-warning:w1", "state-warning:w2"]);
});

test("the shim reads status.stateFile from the sidecar it runs (fake sidecars, old and new)", async () => {
  const cases = [
    { name: "stateFile memory-only", status: { stateFile: { mode: "memory-only", path: "/s/a.json", reason: "locked by another process" } }, warns: true },
    { name: "stateFile persistent, stale text", status: { stateFile: { mode: "persistent", path: "/s/a.json" }, state: "memory-only: stale" }, warns: false },
    { name: "older binary, memory-only text", status: { state: "memory-only: locked by another process" }, warns: true },
    { name: "older binary, persistent text", status: { state: "persistent: /s/a.json" }, warns: false },
  ];
  for (const c of cases) {
    const box = sandbox();
    const trace = join(box.s.dir, "trace-fake.jsonl");
    const fc = fakeClient({ agents: AGENTS });
    const h = createHookwire(
      { client: fc.client, directory: box.project("fake"), worktree: box.project("fake") },
      { binary: fakeSidecar, args: ["ok"], trace, logFile: null, timeoutMs: 2000, transformTimeoutMs: 4000 },
      { ...box.env, FAKE_STATUS: JSON.stringify(c.status) },
    );
    instances.push(h);
    // Both the state check and the trace's inspect ask status after initialize.
    await waitFor(() => readTrace(trace).filter((r) => r.ev === "reply" && r.method === "status").length >= 2, 10_000);
    const warnings = fc.logs.filter((l) => l.message.includes("state file not used"));
    assert.equal(warnings.length, c.warns ? 1 : 0, c.name);
    if (c.warns) assert.equal(warnings[0].level, "warn", c.name);
    await close(h);
  }
});

function readTrace(file) {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
}

test("an upgrading user's JSON state file (an earlier release's) is imported: its aliases resolve, the file is kept as .json.bak", async () => {
  const box = sandbox();
  const dir = box.project("upgrade");
  mkdirSync(box.stateDir, { recursive: true, mode: 0o700 });
  const legacy = oldRule(box.stateDir, dir).replace(/\.db$/, ".json");
  copyFileSync(new URL("../../sessiondb/testdata/release-state.json", import.meta.url), legacy);
  const { h } = await open(box, dir, { taskSessions: { agents: { "code reviewer": "rev" } } });
  const args = { description: "Again", prompt: "p", subagent_type: "explorer", task_id: "exp-2" };
  await h.hooks["tool.execute.before"]({ tool: "task", sessionID: "ses_parent_a", callID: "call_up" }, { args });
  assert.equal(args.task_id, "ses_child_x2");
  assert.equal(existsSync(legacy), false);
  assert.ok(existsSync(legacy + ".bak"));
  await close(h);
});

/** OpenCode's message.updated for an assistant message whose provider read `read` tokens from the cache. */
const usage = (h, session, id, read) =>
  h.hooks.event({
    event: {
      type: "message.updated",
      properties: { info: { id, sessionID: session, role: "assistant", providerID: "fake", modelID: "m", tokens: { input: 10, output: 1, cache: { read, write: 0 } } } },
    },
  });
const bustToasts = (toasts) => toasts.filter((t) => /prompt cache missed/.test(t.message));

test("prompt cache: the sidecar alone counts busts, across processes too; the shim toasts what cache.bust says, once per session (PROTOCOL.md 4.9)", async () => {
  const box = sandbox();
  const dir = box.project("cache");
  const SES = "ses_cache00000000000000000001";
  const first = await open(box, dir);
  await usage(first.h, SES, "msg_a1", 100);
  await usage(first.h, SES, "msg_a2", 50); // one fall
  await usage(first.h, SES, "msg_a2", 60); // the same message with new figures: not a new request
  assert.equal((await first.h.sidecar.request("status", {}, 4000)).result.cache.perSession[0].bustsInARow, 1);
  assert.deepEqual(bustToasts(first.toasts), []);
  await close(first.h);

  // The next process (opencode run --session) meets the session's second
  // fall in its first usage: the sidecar, which keeps the figures, says so;
  // a shim counting on its own would see a first request.
  const next = await open(box, dir);
  await usage(next.h, SES, "msg_a3", 40);
  await waitFor(() => bustToasts(next.toasts).length > 0, 5000);
  const [toast] = bustToasts(next.toasts);
  assert.match(toast.message, new RegExp(`missed 2 times in a row in session ${SES}: `));
  await usage(next.h, SES, "msg_a4", 30); // third in a row: told again, shown once per session
  const st = (await next.h.sidecar.request("status", {}, 4000)).result.cache.perSession[0];
  assert.equal(st.bustsInARow, 3);
  assert.equal(st.lastBust.message, "msg_a4");
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(bustToasts(next.toasts).length, 1);
  await close(next.h);
});
