// The named parts createHookwire wires together, each on its own: the
// sidecar's arguments, initialize params, the event queue.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { EventForwarder, deadlineOf, usageEvent } from "../dist/forward.js";
import { Logger } from "../dist/log.js";
import { sidecarArgs } from "../dist/statefile.js";
import { InitParams, agentListsOf, learnAgents } from "../dist/agents.js";
import { editDistance, nearShimOption, optionsFromEnv, resolveSettings } from "../dist/options.js";
import { fakeClient, flushIO, repoDir } from "./helpers.mjs";


test("sidecarArgs: --project DIR by default, --state FILE for the state option, after the user's args; nothing for memory only", () => {
  assert.deepEqual(sidecarArgs({ args: ["--log-level", "debug"], state: null, project: "/work/app" }), ["--log-level", "debug", "--project", "/work/app"]);
  assert.deepEqual(sidecarArgs({ args: [], state: "/s/mine.json", project: null }), ["--state", "/s/mine.json"]);
  assert.deepEqual(sidecarArgs({ args: ["-x"], state: null, project: null }), ["-x"]);
  // Through resolveSettings: the explicit path wins, false is memory only, a --state or --project of the user's own wins.
  const project = { worktree: "/repo", directory: "/repo/sub" };
  const argsOf = (options) => sidecarArgs(resolveSettings(options, {}, project));
  assert.deepEqual(argsOf({}), ["--project", "/repo"], "OpenCode's worktree, the git top level");
  assert.deepEqual(argsOf({ state: "/s/x.json" }), ["--state", "/s/x.json"]);
  assert.deepEqual(argsOf({ state: "x.json" }), ["--state", "/repo/x.json"], "a relative path from the project directory");
  assert.deepEqual(argsOf({ state: false }), []);
  assert.deepEqual(argsOf({ args: ["--state=/a.json"] }), ["--state=/a.json"]);
  assert.deepEqual(argsOf({ args: ["--project", "/elsewhere"] }), ["--project", "/elsewhere"]);
  assert.deepEqual(sidecarArgs(resolveSettings({}, {}, { worktree: "/", directory: "/tmp/notgit" })), ["--project", "/tmp/notgit"]);
  assert.deepEqual(sidecarArgs(resolveSettings({}, {}, {})), [], "no project directory: memory only");
});

const agentsClient = (list, counter = { n: 0 }) => ({ app: { agents: async () => (counter.n++, { data: list }) } });
const STOCK = [
  { name: "build", mode: "primary" },
  { name: "plan", mode: "primary" },
  { name: "general", mode: "subagent" },
  { name: "explore", mode: "subagent" },
  { name: "both", mode: "all" },
  { name: "title", mode: "primary", hidden: true },
  { name: "secret", mode: "subagent", hidden: true },
];

test("agentListsOf: primary agents (primary, all) and subagents (subagent, all), hidden ones left out; undefined without a list", () => {
  const want = { primaryAgents: ["build", "plan", "both"], subagents: ["general", "explore", "both"] };
  assert.deepEqual(agentListsOf({ data: STOCK }), want);
  assert.deepEqual(agentListsOf(STOCK), want, "a bare array");
  assert.deepEqual(agentListsOf({ data: [null, 5, { mode: "primary" }, { name: " ", mode: "primary" }] }), { primaryAgents: [], subagents: [] });
  for (const bad of [undefined, null, {}, { data: "x" }, { error: { message: "no" } }]) assert.equal(agentListsOf(bad), undefined, JSON.stringify(bad));
});

test("InitParams: the user's lists win; else OpenCode's agents (asked once); else the config hook's subagents", async () => {
  const asked = { n: 0 };
  const given = await new InitParams({ subagents: ["a"], primaryAgents: ["p"], cacheStable: true }, agentsClient(STOCK, asked), "1.2.3").build();
  assert.deepEqual(given, { protocolVersion: 1, clientInfo: { name: "hookwire-opencode", version: "1.2.3" }, config: { subagents: ["a"], primaryAgents: ["p"], cacheStable: true } });
  assert.equal(asked.n, 0, "both lists given: OpenCode is not asked");

  const fromAgents = new InitParams({}, agentsClient(STOCK, asked), "0");
  const want = { subagents: ["general", "explore", "both"], primaryAgents: ["build", "plan", "both"] };
  assert.deepEqual((await fromAgents.build()).config, want);
  assert.deepEqual((await fromAgents.build()).config, want, "a respawn reuses the answer");
  assert.equal(asked.n, 1);

  const subOnly = await new InitParams({ subagents: [] }, agentsClient(STOCK), "0").build();
  assert.deepEqual(subOnly.config, { subagents: [], primaryAgents: ["build", "plan", "both"] }, "the user's subagents, OpenCode's primary agents");

  const waits = { initialMs: 5, retryAfterMs: 1000, retryPauseMs: 1, maxCalls: 1, totalMs: 1000 };
  const broken = new InitParams({}, { app: { agents: async () => { throw new Error("no"); } } }, "0", undefined, waits);
  broken.onConfig({ agent: { y: { mode: "all" }, off: { mode: "subagent", disable: true }, b: { mode: "primary" } } });
  assert.deepEqual((await broken.build()).config, { subagents: ["y"] }, "the agents call failed: the config's subagents, no primary agents");
  broken.onConfig(null);
  assert.deepEqual((await broken.build()).config, {}, "a later config without agents");
});

test("learnAgents on a mocked clock: a slow call is asked again at retryAfterMs and either answer wins; failures are retried after a pause; bounded by maxCalls and totalMs", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const waits = { initialMs: 1500, retryAfterMs: 10_000, retryPauseMs: 1000, maxCalls: 3, totalMs: 30_000 };
  const settle = () => flushIO();

  // The first call hangs; the second (made at 10 s) answers at 12 s.
  const calls = [];
  const client = { app: { agents: () => new Promise((resolve) => calls.push({ at: calls.length === 0 ? Infinity : 12_000, resolve })) } };
  let got;
  const l = learnAgents(client, waits);
  void l.lists.then((v) => (got = v));
  assert.equal(calls.length, 1);
  t.mock.timers.tick(9_999);
  assert.equal(calls.length, 1);
  t.mock.timers.tick(1);
  assert.equal(calls.length, 2, "asked again at retryAfterMs");
  t.mock.timers.tick(2_000);
  calls[1].resolve({ data: STOCK });
  await settle();
  assert.deepEqual(got, agentListsOf({ data: STOCK }));
  t.mock.timers.tick(60_000);
  assert.equal(calls.length, 2, "nothing asked after an answer");

  // Every call fails: three calls, a pause between them, then undefined.
  let n = 0;
  const failing = { app: { agents: async () => (n++, { error: "boom" }) } };
  let failed = "pending";
  void learnAgents(failing, waits).lists.then((v) => (failed = v));
  await settle();
  assert.equal(n, 1);
  t.mock.timers.tick(999);
  await settle();
  assert.equal(n, 1);
  t.mock.timers.tick(1);
  await settle();
  assert.equal(n, 2);
  t.mock.timers.tick(1000);
  await settle();
  assert.equal(n, 3);
  assert.equal(failed, undefined, "all calls failed: given up at once");

  // Calls that never answer: given up at totalMs.
  let hung = "pending";
  void learnAgents({ app: { agents: () => new Promise(() => {}) } }, waits).lists.then((v) => (hung = v));
  t.mock.timers.tick(29_999);
  await settle();
  assert.equal(hung, "pending");
  t.mock.timers.tick(1);
  await settle();
  assert.equal(hung, undefined);

  // No agents function: undefined at once.
  assert.equal(await learnAgents({ app: {} }, waits).lists, undefined);
});

test("InitParams: a list that comes after initialize goes out as agents.update, once, to the sidecar then up; later spawns get it in initialize", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let answer;
  const client = { app: { agents: () => new Promise((r) => (answer = r)) } };
  const fc = fakeClient();
  const init = new InitParams({ subagents: ["mine"] }, client, "0", new Logger(fc.client));
  const sent = [];
  const sidecar = { state: "starting", notify: (method, params) => (sent.push({ method, params }), sidecar.state === "ready") };
  init.start(sidecar);
  const building = init.build();
  t.mock.timers.tick(1500);
  const first = await building;
  assert.deepEqual(first.config, { subagents: ["mine"] }, "initialize went without OpenCode's list");
  sidecar.state = "ready";
  init.onReady();
  assert.deepEqual(sent, [], "nothing learned yet");

  answer({ data: STOCK });
  await flushIO();
  assert.deepEqual(sent, [{ method: "agents.update", params: { primaryAgents: ["build", "plan", "both"] } }], "only the list the user did not give");
  init.onReady();
  assert.equal(sent.length, 1, "delivered once");

  // A restart: initialize carries the list, no update needed.
  sidecar.state = "starting";
  const second = await init.build();
  assert.deepEqual(second.config, { subagents: ["mine"], primaryAgents: ["build", "plan", "both"] });
  sidecar.state = "ready";
  init.onReady();
  assert.equal(sent.length, 1);
});

test("InitParams: a list that comes while the sidecar is starting (initialize sent without it) is delivered when it is ready", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let answer;
  const init = new InitParams({}, { app: { agents: () => new Promise((r) => (answer = r)) } }, "0");
  const sent = [];
  const sidecar = { state: "starting", notify: (method, params) => (sent.push({ method, params }), true) };
  init.start(sidecar);
  const building = init.build();
  t.mock.timers.tick(1500);
  assert.deepEqual((await building).config, {});
  answer({ data: STOCK });
  await flushIO();
  assert.deepEqual(sent, [], "not ready: nothing sent yet");
  sidecar.state = "ready";
  init.onReady();
  assert.deepEqual(sent, [{ method: "agents.update", params: { primaryAgents: ["build", "plan", "both"], subagents: ["general", "explore", "both"] } }]);
});

test("InitParams: a list that never comes is logged once at warn; a dispose meanwhile is not such a case", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const never = { app: { agents: () => new Promise(() => {}) } };
  const fc = fakeClient();
  new InitParams({}, never, "0", new Logger(fc.client)).start();
  t.mock.timers.tick(30_000);
  await flushIO();
  assert.deepEqual(fc.logs.map((l) => [l.level, l.message]), [["warn", "hookwire: OpenCode's agent list did not come within 30 s; using the agents named in its config"]]);
  const disposed = fakeClient();
  const init = new InitParams({}, never, "0", new Logger(disposed.client));
  init.start();
  t.mock.timers.tick(1000);
  init.stop();
  await flushIO();
  assert.deepEqual(disposed.logs, []);
});

test("plugin options: a bad value keeps its default with a warning naming the option; a misspelt shim option is left out with a did-you-mean", () => {
  const rows = [
    { options: { timeoutMs: "fast" }, field: "timeoutMs", want: 250, warning: 'timeoutMs must be a number of milliseconds above 0, got "fast"; using the default 250' },
    { options: { transformTimeoutMs: -1 }, field: "transformTimeoutMs", want: 2000, warning: "transformTimeoutMs must be a number of milliseconds above 0, got -1; using the default 2000" },
    { options: { hungAfterMisses: 1.5 }, field: "hungAfterMisses", want: 3, warning: "hungAfterMisses must be a whole number, 0 or more, got 1.5; using the default 3" },
    { options: { maxInFlightBytes: "8MB" }, field: "maxInFlightBytes", want: 8 * 1024 * 1024, warning: 'maxInFlightBytes must be a number of bytes above 0, got "8MB"; using the default 8388608' },
    { options: { args: "--log-level debug" }, field: "args", want: [], warning: 'args must be a list of strings, got "--log-level debug"; using none' },
    { options: { args: ["--log-level", 5, "debug"] }, field: "args", want: ["--log-level", "debug"], warning: "args[1] must be a string, got 5; left out" },
    { options: { state: true }, field: "stateSource", want: "default", warning: "state must be false or a file path, got true; using the per-project default" },
    { options: { logFile: 7 }, field: "logFile", want: "/x/state/hookwire/sidecar.log", warning: "logFile must be a file path, or null to discard the sidecar's log, got 7; using the default /x/state/hookwire/sidecar.log" },
    { options: { binary: 42 }, field: "binarySource", want: "none", warning: "binary must be a path or a command name, got 42; looking for hookwire via HOOKWIRE_BIN, the platform package or PATH instead" },
    { options: { timeoutMS: 100 }, field: "timeoutMs", want: 250, warning: 'timeoutMS: unknown option, ignored (did you mean "timeoutMs"?)' },
    { options: { binray: "/b" }, field: "binarySource", want: "none", warning: 'binray: unknown option, ignored (did you mean "binary"?)' },
    { options: { stat: false }, field: "stateSource", want: "default", warning: 'stat: unknown option, ignored (did you mean "state"?)' },
  ];
  const env = { HOME: "/home/u", XDG_STATE_HOME: "/x/state", PATH: "/nonexistent" };
  for (const r of rows) {
    const s = resolveSettings({ ...r.options, cacheStable: false }, env, { directory: "/p" });
    assert.deepEqual(s[r.field], r.want, JSON.stringify(r.options));
    assert.deepEqual(s.warnings, [r.warning], JSON.stringify(r.options));
    assert.deepEqual(s.config, { cacheStable: false }, "the misspelt option is not sent to the sidecar; the rest is");
  }
  const good = resolveSettings({ timeoutMs: 1, hungAfterMisses: 0, state: false, logFile: null, trace: "", args: [], managedAgents: ["build"], cachestable: true }, env, {});
  assert.deepEqual(good.warnings, [], "valid values, and names the sidecar judges (cachestable) are the sidecar's");
  assert.deepEqual(good.config, { managedAgents: ["build"], cachestable: true });
  assert.deepEqual(resolveSettings("x", env, {}).warnings, ['the plugin options must be an object, got "x"; using the defaults']);
});

test("HOOKWIRE_OPTIONS: the options on an OpenCode that passes none (before 1.14); options OpenCode passed win; bad JSON warns", () => {
  const env = (v) => ({ HOOKWIRE_OPTIONS: v, HOME: "/tmp" });
  const cases = [
    // [options OpenCode passed, HOOKWIRE_OPTIONS, options used, warning?]
    [undefined, '{"cacheStable":false}', { cacheStable: false }, undefined],
    [{}, '{"cacheStable":false}', { cacheStable: false }, undefined],
    [null, '{"timeoutMs":900}', { timeoutMs: 900 }, undefined],
    [{ cacheStable: true }, '{"cacheStable":false}', { cacheStable: true }, undefined],
    [undefined, undefined, undefined, undefined],
    [undefined, "  ", undefined, undefined],
    [undefined, "[1]", undefined, /must be a JSON object/],
    [undefined, "{cacheStable:false", undefined, /is not JSON/],
  ];
  for (const [given, raw, want, warning] of cases) {
    const got = optionsFromEnv(given, env(raw));
    assert.deepEqual(got.options, want === undefined && given !== undefined && !warning ? given : want, `${JSON.stringify(given)} + ${raw}`);
    if (warning) assert.match(got.warning, warning);
    else assert.equal(got.warning, undefined);
  }
  const settings = resolveSettings(undefined, { HOOKWIRE_OPTIONS: '{"timeoutMs":900,"cacheStable":false}', HOME: "/tmp" }, undefined, () => null);
  assert.equal(settings.timeoutMs, 900);
  assert.deepEqual(settings.config, { cacheStable: false });
  const bad = resolveSettings(undefined, { HOOKWIRE_OPTIONS: "nope", HOME: "/tmp" }, undefined, () => null);
  assert.ok(bad.warnings.some((w) => w.startsWith("HOOKWIRE_OPTIONS is not JSON")), bad.warnings.join("; "));
});

test("no member of the sidecar's config (PROTOCOL.md 7) is taken for a misspelt shim option", () => {
  const doc = readFileSync(join(repoDir, "docs", "PROTOCOL.md"), "utf8");
  const section = doc.slice(doc.indexOf("## 7. Configuration"), doc.indexOf("## 8."));
  const members = [...new Set([...section.matchAll(/"([A-Za-z]+)":/g)].map((m) => m[1]))];
  assert.ok(members.includes("cacheStable") && members.includes("managedAgents") && members.length > 10, members.join(","));
  for (const m of [...members, "orchestratorAgent"]) assert.equal(nearShimOption(m), undefined, m);
  assert.equal(editDistance("cachestable", "cacheStable"), 1);
  assert.equal(editDistance("tiemoutMs", "timeoutMs"), 1, "a swap of neighbours is one edit");
  assert.equal(editDistance("éa", "aé!"), 2, "code points, as Go's copy counts");
  assert.equal(editDistance("\u{1F600}a", "a"), 1, "a character outside the BMP is one");
});

test("the did-you-mean for the shim's options decides as hookwire doctor's (Go's copy) does: one table for both", () => {
  const { cases } = JSON.parse(readFileSync(join(repoDir, "config", "testdata", "near-shim-options.json"), "utf8"));
  assert.ok(cases.length > 10);
  for (const [name, want] of cases) assert.equal(nearShimOption(name) ?? "", want, JSON.stringify(name));
});

test("deadlineOf: the transforms get transformTimeoutMs, every other hook timeoutMs", () => {
  const d = { timeoutMs: 1, transformTimeoutMs: 2 };
  assert.equal(deadlineOf("chat.system.transform", d), 2);
  assert.equal(deadlineOf("chat.messages.transform", d), 2);
  for (const m of ["tool.execute.before", "tool.execute.after", "chat.message"]) assert.equal(deadlineOf(m, d), 1);
});

/** A stand-in for Sidecar with the surface EventForwarder uses. */
function stubSidecar() {
  const sent = [];
  const ready = [];
  const whenReadyCalls = [];
  const s = {
    state: "starting",
    sent,
    whenReadyCalls,
    whenReady: (ms) => (whenReadyCalls.push(ms), new Promise((r) => ready.push(r))),
    wantsEvent: (type) => s.state === "ready" && type === "session.deleted",
    notify: (method, params) => (sent.push({ method, params }), true),
    becomeReady() {
      s.state = "ready";
      for (const r of ready) r(true);
    },
  };
  return s;
}

test("EventForwarder: early events wait for initialize, only wanted types go out, the queue is bounded", async () => {
  const s = stubSidecar();
  const deleted = [];
  const events = new EventForwarder(s, new Logger(undefined), { waitMs: 1234, maxWaiting: 2, afterDelete: async (e) => void deleted.push(e.type) });
  const a = events.onEvent({ event: { type: "session.deleted", properties: { n: 1 } } });
  const b = events.onEvent({ event: { type: "message.part.delta" } });
  const c = events.onEvent({ event: { type: "session.deleted", properties: { n: 3 } } }); // third: over maxWaiting, dropped
  await c;
  assert.equal(events.waitingCount, 2);
  assert.deepEqual(s.whenReadyCalls, [1234, 1234]);
  s.becomeReady();
  await Promise.all([a, b]);
  assert.equal(events.waitingCount, 0);
  assert.deepEqual(s.sent, [{ method: "event", params: { input: { event: { type: "session.deleted", properties: { n: 1 } } } } }]);
  assert.deepEqual(deleted, ["session.deleted"]);
  await events.onEvent({ event: { type: 5 } });
  await events.onEvent(undefined);
  assert.equal(s.sent.length, 1);
});

test("message.updated: only an assistant message's usage goes out, projected (no content), once per figures", async () => {
  const s = stubSidecar();
  s.wantsEvent = (type) => s.state === "ready" && type === "message.updated";
  s.state = "ready";
  const events = new EventForwarder(s, new Logger(undefined));
  const info = (over) => ({
    id: "msg_a1", sessionID: "ses_1", role: "assistant", providerID: "fake", modelID: "m1", path: { cwd: "/secret" },
    error: { name: "APIError", data: { message: "the prompt text" } }, summary: { title: "private" },
    tokens: { input: 10, output: 5, reasoning: 2, cache: { read: 90, write: 0 } }, cost: 0.25, time: { created: 1, completed: 2 }, ...over,
  });
  const ev = (i) => ({ event: { type: "message.updated", properties: { sessionID: i.sessionID, info: i } } });
  const want = {
    type: "message.updated",
    properties: {
      sessionID: "ses_1",
      info: {
        id: "msg_a1", sessionID: "ses_1", role: "assistant", providerID: "fake", modelID: "m1",
        tokens: { input: 10, output: 5, reasoning: 2, cache: { read: 90, write: 0 } }, cost: 0.25, time: { completed: 2 }, error: { name: "APIError" },
      },
    },
  };
  const cases = [
    ["an assistant message with usage: projected", info({}), want],
    ["a user message: nothing", info({ role: "user" }), undefined],
    ["an assistant message just started (all tokens 0): nothing", info({ tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }, time: { created: 1 }, error: undefined }), undefined],
    ["all tokens 0 but failed: its error name and status go (4.10)", info({ tokens: undefined, time: { created: 1 }, error: { name: "APIError", data: { statusCode: 429, message: "the prompt text" } } }),
      { ...want, properties: { ...want.properties, info: { id: "msg_a1", sessionID: "ses_1", role: "assistant", providerID: "fake", modelID: "m1",
        tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }, cost: 0.25, error: { name: "APIError", data: { statusCode: 429 } } } } }],
    ["no tokens, not ended: nothing", info({ tokens: undefined, time: { created: 1 }, error: undefined }), undefined],
    ["no id: nothing", info({ id: 7 }), undefined],
    ["bad counts read as 0", info({ tokens: { input: "10", output: -1, cache: { read: 4, write: NaN } } }),
      { ...want, properties: { ...want.properties, info: { ...want.properties.info, tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 4, write: 0 } } } } }],
  ];
  for (const [name, i, expected] of cases) assert.deepEqual(usageEvent(ev(i).event), expected, name);

  await events.onEvent(ev(info({})));
  await events.onEvent(ev(info({ path: { cwd: "/other" } }))); // same figures again: not sent twice
  await events.onEvent(ev(info({ role: "user" })));
  await events.onEvent(ev(info({ tokens: { input: 12, output: 5, cache: { read: 90, write: 0 } } }))); // new figures: sent
  assert.equal(s.sent.length, 2);
  assert.deepEqual(s.sent[0], { method: "event", params: { input: { event: want } } });
  assert.equal(s.sent[1].params.input.event.properties.info.tokens.input, 12);
  assert.ok(!JSON.stringify(s.sent).includes("secret") && !JSON.stringify(s.sent).includes("prompt text"));
});

test("prompt cache: the shim counts no busts; it shows the sidecar's cache.bust once per session (PROTOCOL.md 4.9)", async () => {
  const s = stubSidecar();
  s.wantsEvent = (type) => s.state === "ready" && type === "message.updated";
  s.state = "ready";
  const asked = [];
  s.request = async (method) => (asked.push(method), { ok: true, result: {} });
  const { client, toasts } = fakeClient();
  const log = new Logger(client);
  const events = new EventForwarder(s, log);
  const usage = (session, id, read) => ({
    event: { type: "message.updated", properties: { info: { id, sessionID: session, role: "assistant", tokens: { input: 1, output: 1, cache: { read, write: 0 } } } } },
  });
  for (const [session, id, read] of [["ses_a", "m1", 100], ["ses_a", "m2", 50], ["ses_a", "m3", 40], ["ses_a", "m4", 30]]) {
    await events.onEvent(usage(session, id, read));
  }
  assert.equal(s.sent.length, 4, "every usage goes to the sidecar");
  assert.deepEqual(asked, [], "falls in a row ask nothing: the sidecar tells");
  assert.equal(toasts.length, 0);

  const { toastBusts } = await import("../dist/plugin.js");
  const lastBust = { message: "m3", cause: "system", byHookwire: false, tokensLost: 900, detail: "system prompt changed by another plugin or OpenCode" };
  toastBusts(log, { session: "ses_a", bustsInARow: 2 }); // no bust to name: nothing shown
  toastBusts(log, undefined);
  assert.equal(toasts.length, 0);
  toastBusts(log, { session: "ses_a", requests: 3, busts: 2, bustsInARow: 2, lastBust });
  toastBusts(log, { session: "ses_a", requests: 4, busts: 3, bustsInARow: 3, lastBust: { ...lastBust, message: "m4" } }); // once per session
  toastBusts(log, { session: "ses_b", requests: 3, busts: 2, bustsInARow: 2, lastBust });
  assert.equal(toasts.length, 2);
  assert.match(toasts[0].message, /missed 2 times in a row in session ses_a: system prompt changed by another plugin or OpenCode/);
  assert.match(toasts[1].message, /in session ses_b/);
});

test("hungAfterMisses and maxInFlightBytes: shim options with documented defaults, never sent to the sidecar", async () => {
  const { resolveSettings, DEFAULT_HUNG_AFTER_MISSES, DEFAULT_MAX_IN_FLIGHT_BYTES } = await import("../dist/options.js");
  assert.equal(DEFAULT_HUNG_AFTER_MISSES, 3);
  assert.equal(DEFAULT_MAX_IN_FLIGHT_BYTES, 8 * 1024 * 1024);
  const dflt = resolveSettings({}, {}, {});
  assert.equal(dflt.hungAfterMisses, 3);
  assert.equal(dflt.maxInFlightBytes, 8 * 1024 * 1024);
  const set = resolveSettings({ hungAfterMisses: 0, maxInFlightBytes: 1024, cacheStable: true }, {}, {});
  assert.equal(set.hungAfterMisses, 0, "0 turns hang detection off");
  assert.equal(set.maxInFlightBytes, 1024);
  assert.deepEqual(set.config, { cacheStable: true });
  for (const bad of [-1, 1.5, "3", null]) assert.equal(resolveSettings({ hungAfterMisses: bad }, {}, {}).hungAfterMisses, 3, String(bad));
  for (const bad of [0, -5, "8", Infinity]) assert.equal(resolveSettings({ maxInFlightBytes: bad }, {}, {}).maxInFlightBytes, 8 * 1024 * 1024, String(bad));
});
