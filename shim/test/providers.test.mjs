// The provider list for the sidecar's model decisions (providers.ts): what
// is read from OpenCode's config.providers(), when providers.update goes
// out, and how long a chat.message of a listed agent waits for it. Then the
// whole path against the real sidecar: a subagent on a provider that is not
// connected runs on its fallback.
import assert from "node:assert/strict";
import { mock, test } from "node:test";
import { createHookwire } from "../dist/plugin.js";
import { Providers, providerListOf } from "../dist/providers.js";
import { alive, flushIO, realSidecar, scratch, sleep, waitFor } from "./helpers.mjs";

const FAST = { retryPauseMs: 10, maxCalls: 3 };
const CONFIG = { agentModels: { explorer: { fallbackChain: [{ providers: ["fake"], model: "fake-model-2" }] } } };

// OpenCode 1.18.33's answer (trimmed): connected providers only, each with its models.
const ANSWER = {
  data: {
    providers: [
      { id: "opencode", models: { "big-pickle": { id: "big-pickle" } } },
      { id: "fake", models: { "fake-model": { id: "fake-model" }, "fake-model-2": { id: "fake-model-2" } } },
    ],
    default: { opencode: "big-pickle", fake: "fake-model" },
  },
};
const LIST = { connectedProviders: ["opencode", "fake"], availableModels: ["opencode/big-pickle", "fake/fake-model", "fake/fake-model-2"] };

/** config.providers() answering answers[i] for the i-th call (the last one repeats); "throw", "reject", "hang" or a delay {after, value}. */
function providersClient(...answers) {
  let calls = 0;
  const client = {
    config: {
      providers: () => {
        const a = answers[Math.min(calls++, answers.length - 1)];
        if (a === "throw") throw new Error("down");
        if (a === "reject") return Promise.reject(new Error("down"));
        if (a === "hang") return new Promise(() => {});
        if (a && a.after) return sleep(a.after).then(() => a.value);
        return Promise.resolve(a);
      },
    },
  };
  return { client, calls: () => calls };
}

/**
 * Runs fn on a mocked clock (node:test's mock timers, as deadline.test.mjs):
 * waits are read off the clock's ticks, never the machine's speed.
 * fn gets advance(ms), which moves the clock and lets what follows run.
 */
async function onMockedClock(fn) {
  mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
  const advance = async (ms) => {
    mock.timers.tick(ms);
    for (let i = 0; i < 5; i++) {
      await flushIO();
      mock.timers.tick(0);
    }
  };
  try {
    await fn(advance);
  } finally {
    mock.timers.reset();
  }
}

/** A promise's state without waiting: the value, or "pending". */
function track(p) {
  const t = { value: "pending" };
  p.then((v) => (t.value = v));
  return t;
}

/** A sidecar stand-in that records notifications. */
function receiver({ methods = ["providers.update"], state = "ready" } = {}) {
  return { state, capabilities: { methods }, sent: [], notify(method, params) { this.sent.push({ method, params }); return true; } };
}

test("providerListOf reads connected providers and their models, and nothing else", () => {
  assert.deepEqual(providerListOf(ANSWER), LIST);
  assert.deepEqual(providerListOf(ANSWER.data, "fake/fake-model"), { ...LIST, defaultModel: "fake/fake-model" }, "a bare body too");
  assert.deepEqual(
    providerListOf({ providers: [{ id: "" }, null, { id: 7 }, { id: "a" }, { id: "b", models: { " ": {}, m: {} } }] }),
    { connectedProviders: ["a", "b"], availableModels: ["b/m"] },
  );
  for (const bad of [undefined, null, {}, { data: {} }, { data: { providers: "x" } }, "text"]) assert.equal(providerListOf(bad), undefined);
});

test("sent once after initialize, again only when it changes, and to every new sidecar", async () => {
  const changed = { data: { providers: [...ANSWER.data.providers, { id: "openai", models: { "gpt-5.4": {} } }] } };
  const { client, calls } = providersClient(ANSWER, ANSWER, changed);
  const p = new Providers(CONFIG, client, undefined, FAST);
  const r = receiver();
  p.start(r);
  p.onReady();
  await waitFor(() => r.sent.length === 1);
  assert.deepEqual(r.sent[0], { method: "providers.update", params: LIST });

  p.onEvent({ event: { type: "message.updated" } });
  p.onEvent({ event: { type: "catalog.updated" } });
  await waitFor(() => calls() === 2);
  await sleep(20);
  assert.equal(r.sent.length, 1, "the same list is not sent again");

  p.onEvent({ event: { type: "config.updated" } });
  await waitFor(() => r.sent.length === 2);
  assert.deepEqual(r.sent[1].params.connectedProviders, ["opencode", "fake", "openai"]);

  p.onConfig({ model: "fake/fake-model" });
  assert.equal(r.sent.length, 3, "OpenCode's default model arrived: sent again");
  assert.equal(r.sent[2].params.defaultModel, "fake/fake-model");

  p.onReady(); // a re-spawned sidecar
  assert.equal(r.sent.length, 4);
  assert.deepEqual(r.sent[3].params, r.sent[2].params);
  p.stop();
});

test("nothing is fetched when agentModels lists no agent, or the client cannot list providers", async () => {
  const { client, calls } = providersClient(ANSWER);
  for (const config of [{}, { agentModels: {} }, { agentModels: ["explorer"] }]) {
    const p = new Providers(config, client, undefined, FAST);
    const r = receiver();
    p.start(r);
    p.onReady();
    assert.equal(await p.beforeChatMessage({ agent: "explorer" }, {}, 1000), 0);
    assert.equal(r.sent.length, 0);
  }
  assert.equal(calls(), 0);
  const p = new Providers(CONFIG, {}, undefined, FAST);
  assert.equal(p.enabled, false);
});

test("a chat.message of a listed agent waits for the list; others do not", () =>
  onMockedClock(async (advance) => {
    const { client } = providersClient({ after: 150, value: ANSWER });
    const p = new Providers(CONFIG, client, undefined, FAST);
    const r = receiver();
    p.start(r);
    p.onReady();
    const other = track(p.beforeChatMessage({ agent: "orchestrator" }, {}, 2000));
    const listed = track(p.beforeChatMessage({ sessionID: "s" }, { message: { agent: "explorer" } }, 2000));
    await advance(0);
    assert.equal(other.value, 0, "an agent without an entry: no wait");
    await advance(149);
    assert.equal(listed.value, "pending");
    assert.equal(r.sent.length, 0);
    await advance(1);
    assert.equal(r.sent.length, 1, "the list went out before the chat.message does");
    assert.equal(listed.value, 150, "waited until the list came");
    const again = track(p.beforeChatMessage({ agent: "explorer" }, {}, 2000));
    await advance(0);
    assert.equal(again.value, 0, "once sent, no wait");
    p.stop();
  }));

test("the wait is bounded: a provider list that never comes costs at most the given ms", () =>
  onMockedClock(async (advance) => {
    const { client } = providersClient("hang");
    const p = new Providers(CONFIG, client, undefined, FAST);
    p.start(receiver());
    p.onReady();
    const waited = track(p.beforeChatMessage({ agent: "explorer" }, {}, 100));
    await advance(99);
    assert.equal(waited.value, "pending");
    await advance(1);
    assert.equal(waited.value, 100);
    p.stop();
  }));

test("failed calls are retried; once every call failed, nobody waits", async () => {
  const { client, calls } = providersClient("throw", "reject", ANSWER);
  const p = new Providers(CONFIG, client, undefined, FAST);
  const r = receiver();
  p.start(r);
  p.onReady();
  await waitFor(() => r.sent.length === 1);
  assert.equal(calls(), 3);
  p.stop();

});

test("once every call failed, nobody waits, and a chat.message already waiting goes on", () =>
  onMockedClock(async (advance) => {
    const broken = providersClient("reject");
    const q = new Providers(CONFIG, broken.client, undefined, FAST);
    q.start(receiver());
    q.onReady();
    const early = track(q.beforeChatMessage({ agent: "explorer" }, {}, 2000));
    await advance(0);
    assert.equal(broken.calls(), 1);
    await advance(10);
    assert.equal(broken.calls(), 2, "asked again after retryPauseMs");
    assert.equal(early.value, "pending");
    await advance(10);
    assert.equal(broken.calls(), 3);
    assert.equal(early.value, 20, "woken when the last call failed, not at its 2000 ms");
    const late = track(q.beforeChatMessage({ agent: "explorer" }, {}, 2000));
    await advance(0);
    assert.equal(late.value, 0, "given up: no wait at all");
    q.stop();
  }));

test("a sidecar that does not know providers.update gets none, and nobody waits for it", async () => {
  const { client } = providersClient(ANSWER);
  const p = new Providers(CONFIG, client, undefined, FAST);
  const r = receiver({ methods: ["status"] });
  p.start(r);
  p.onReady();
  await sleep(30);
  assert.equal(r.sent.length, 0);
  assert.equal(await p.beforeChatMessage({ agent: "explorer" }, {}, 2000), 0);
  p.stop();
});

// The real sidecar: the first child's chat.message comes before the slow
// provider list, waits for it, and gets its model patched.
test("real sidecar: a subagent on an unconnected provider runs on its fallback; an available model is left", async () => {
  const s = scratch();
  const { client } = providersClient({ after: 300, value: ANSWER });
  client.app = { log: () => Promise.resolve(true), agents: async () => ({ data: [] }) };
  const config = {
    ...CONFIG,
    agentModels: { ...CONFIG.agentModels, oracle: { fallbackChain: [{ providers: ["fake"], model: "fake-model-2" }] } },
  };
  const h = createHookwire({ client }, { binary: realSidecar(), trace: s.trace, logFile: s.log, timeoutMs: 3000, state: false, ...config }, { ...process.env, HOME: s.dir });
  try {
    const message = (agent, providerID, modelID) => ({
      message: { id: "msg_1", role: "user", sessionID: `ses_${agent}`, agent, model: { providerID, modelID } },
      parts: [],
    });
    const explorer = message("explorer", "anthropic", "claude-sonnet-4-6");
    await h.hooks["chat.message"]({ sessionID: "ses_explorer", agent: "explorer", model: { providerID: "anthropic", modelID: "claude-sonnet-4-6" } }, explorer);
    assert.deepEqual(explorer.message.model, { providerID: "fake", modelID: "fake-model-2" });

    const oracle = message("oracle", "fake", "fake-model");
    await h.hooks["chat.message"]({ sessionID: "ses_oracle", agent: "oracle" }, oracle);
    assert.deepEqual(oracle.message.model, { providerID: "fake", modelID: "fake-model" });

    const status = await h.sidecar.request("status", null, 3000);
    assert.ok(status.ok);
    assert.deepEqual(status.result.models.byRung, { "fallback-chain": 1, "category-default": 1 });
    assert.equal(status.result.models.waitingForProviders, 0);
    const order = s.records().filter((r) => (r.ev === "notify" && r.method === "providers.update") || (r.ev === "call" && r.method === "chat.message"));
    assert.equal(order[0].method, "providers.update", "the list went out before the first chat.message");
  } finally {
    const pid = h.sidecar.pid;
    await h.dispose();
    await waitFor(() => !alive(pid), 3000);
    s.cleanup();
  }
});
