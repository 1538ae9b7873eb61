// OpenCode 2's same-call rescue (issue 40), on the host double of the
// released 2.x host (v2host.mjs: its runner retry schedule, the session
// `retry` hook, switchModel, the failure events and texts, each cited
// there) with the real sidecar. The options are the issue's: explore has
// primary-model with fallback-model behind it; the provider answers every
// request on primary-model with a 429.
import assert from "node:assert/strict";
import { test } from "node:test";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { rateLimit, RETRY_SCHEDULE, V2Host } from "./v2host.mjs";
import { realSidecar, scratch, shimDir, waitFor, sidecarPids } from "./helpers.mjs";

const PARENT = "ses_parent_rescue";
const MODELS = [
  { id: "primary-model", modelID: "primary-model", providerID: "fake", name: "primary-model", variants: [], enabled: true, status: "active" },
  { id: "fallback-model", modelID: "fallback-model", providerID: "fake", name: "fallback-model", variants: [], enabled: true, status: "active" },
];
const agentModels = { explore: { model: "fake/primary-model", fallbackChain: [{ providers: ["fake"], model: "fallback-model" }] } };
const user = (id, text) => ({ id, role: "user", content: [{ type: "text", text }] });

const sidecars = sidecarPids;

function hostFor(s, { options = {}, failing = new Set(["fake/primary-model"]) } = {}) {
  process.env.XDG_STATE_HOME = join(s.dir, "xdg-state");
  return new V2Host({
    options: { binary: realSidecar(), trace: s.trace, logFile: s.log, timeoutMs: 4000, transformTimeoutMs: 6000, agentModels, ...options },
    directory: join(s.dir, "project"),
    version: "2.3.2",
    models: MODELS,
    defaultModel: { providerID: "fake", id: "primary-model" },
    provider: (model) => (failing.has(model) ? rateLimit(model.split("/")[1]) : undefined),
    childAnswer: (agent, prompt, child) => `${agent} answered "${prompt}" on ${child.ranOn ?? "?"}`,
  });
}

/** The parent's first request: the sidecar learns the session, its agent and its model. */
async function firstTurn(host, s) {
  await host.context({ sessionID: PARENT, agent: "build", system: [{ type: "text", text: "You are build." }], messages: [user("msg_u1", "Look around")] });
  await waitFor(() => s.records().find((r) => r.ev === "notify" && r.method === "providers.update"), 10000);
}

test("a rate-limited explore child finishes on the fallback in the same call; a later general call runs on the fallback; an explicit model is kept", async () => {
  const s = scratch();
  const binary = realSidecar();
  const host = hostFor(s);
  try {
    await host.load(shimDir);
    await firstTurn(host, s);

    const explore = await host.subagent({ sessionID: PARENT, id: "call_1", input: { agent: "explore", description: "Look around", prompt: "List the files" } });
    assert.equal(explore.status, "completed", explore.text);
    assert.match(explore.text, /explore answered "List the files" on fake\/fallback-model/, "the parent's call returns the child's answer from the fallback");
    assert.equal(host.toolInputs.at(-1).model, "fake/primary-model", "the configured agent's model input is still set");
    const child = host.children.get(explore.sessionID);
    const onPrimary = host.requests.filter((r) => r.session === child.id && r.model === "fake/primary-model");
    assert.equal(onPrimary.length, 1, "one rate-limited request, then the fallback");
    assert.equal(child.waited, 0, "the retry went at once");
    const selected = await waitFor(() => s.records().find((r) => r.ev === "v2-fallback"), 5000);
    assert.equal(selected.to, "fake/fallback-model");

    // The switch is recorded as 1.x's: sessions lists it, applied once the
    // host's session.model.selected (an event, not awaited) is in.
    const entry = await waitFor(() => {
      const out = execFileSync(binary, ["sessions", "--project", join(s.dir, "project"), "--json"], { encoding: "utf8", env: { ...process.env } });
      const e = JSON.parse(out).sessions.find((x) => x.taskId === child.id);
      return e?.switches?.every((w) => !w.pending) ? e : undefined;
    }, 5000);
    assert.equal(entry?.alias, "exp-1");
    assert.equal(entry?.model?.model, "fake/fallback-model", "the child's model is the fallback it finished on");
    assert.deepEqual(entry?.switches?.map((w) => [w.from, w.to]), [["fake/primary-model", "fake/fallback-model"]]);
    assert.match(entry.switches[0].reason, /^rate-limit: Rate limit reached for primary-model/);

    // general has no entry: its child would run on the parent's cooling model.
    const general = await host.subagent({ sessionID: PARENT, id: "call_2", input: { agent: "general", description: "Sum up", prompt: "Summarise" } });
    assert.equal(general.status, "completed", general.text);
    assert.equal(host.toolInputs.at(-1).model, "fake/fallback-model", "the cooling model is skipped for an agent without an entry");
    assert.match(general.text, /on fake\/fallback-model/);
    assert.equal(host.requests.filter((r) => r.session === general.sessionID && r.failed).length, 0, "no request on the cooling model");

    // A model the call names is the user's: kept.
    await host.subagent({ sessionID: PARENT, id: "call_3", input: { agent: "general", description: "On primary", prompt: "Again", model: "fake/primary-model" } });
    assert.equal(host.toolInputs.at(-1).model, "fake/primary-model");
  } finally {
    await host.unload();
  }
  await waitFor(() => sidecars(binary).length === 0, 5000);
  s.cleanup();
});

test("without the rescue (runtimeFallback off) the same child retries eleven times and the call fails: the baseline", async () => {
  const s = scratch();
  const host = hostFor(s, { options: { runtimeFallback: { enabled: false } } });
  try {
    await host.load(shimDir);
    await firstTurn(host, s);
    const explore = await host.subagent({ sessionID: PARENT, id: "call_1", input: { agent: "explore", description: "Look around", prompt: "List the files" } });
    assert.equal(explore.status, "error");
    assert.match(explore.text, /^Subagent failed \(sessionID: ses_\w+\): Rate limit reached for primary-model/);
    const child = [...host.children.values()].at(-1);
    assert.equal(host.requests.filter((r) => r.session === child.id).length, RETRY_SCHEDULE.length + 1);
    assert.equal(child.waited, RETRY_SCHEDULE.reduce((a, b) => a + b, 0), "about 84 s of waiting on OpenCode 2's schedule");
  } finally {
    await host.unload();
  }
  s.cleanup();
});

test("when the fallback fails too the call fails, and its guidance resumes that child under its own agent", async () => {
  const s = scratch();
  const host = hostFor(s, { options: { subagents: ["general", "explore"] }, failing: new Set(["fake/primary-model", "fake/fallback-model"]) });
  try {
    await host.load(shimDir);
    await firstTurn(host, s);
    const failed = await host.subagent({ sessionID: PARENT, id: "call_1", input: { agent: "explore", description: "Look around", prompt: "List the files" } });
    assert.equal(failed.status, "error");
    const child = [...host.children.values()].at(-1);
    assert.ok(host.requests.some((r) => r.session === child.id && r.model === "fake/fallback-model"), "the fallback was tried in the same call");
    assert.match(failed.text, /\[hookwire retry guidance\]/);
    assert.match(failed.text, /Example: subagent\(agent="explore", /, failed.text);
    assert.match(failed.text, /sessionID="exp-1"\)/, failed.text);
    // The child's failure events fed the models' health.
    const health = await waitFor(async () => {
      const r = s.records().findLast((x) => x.ev === "call" && x.method === "model.failed" && x.params?.inPlace === undefined);
      return r;
    }, 5000);
    assert.equal(health.params.sessionID, child.id);
  } finally {
    await host.unload();
  }
  s.cleanup();
});
