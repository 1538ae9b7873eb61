// The OpenCode 2 bridge's own decisions, each on fake 1.x hooks so that a
// slip in one shows alone (issue 39): a context request that names no
// `kind` is the agent loop's (a build that sends none must still be
// bridged); a background child's notice is completed only when it says
// completed (cancelled or failed is an error); a setup that fails
// disposes what it registered.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { shimDir } from "./helpers.mjs";

const { setupV2, bridgeCompletion } = await import(pathToFileURL(join(shimDir, "dist", "v2.js")).href);

/** 1.x hooks that record what they are called with. */
function recordingHooks() {
  const calls = [];
  const hook = (name) => async (input, output) => calls.push({ name, input, output });
  return {
    calls,
    hooks: {
      "experimental.chat.system.transform": hook("system"),
      "experimental.chat.messages.transform": hook("messages"),
      "tool.execute.before": hook("before"),
      "tool.execute.after": hook("after"),
      event: hook("event"),
      dispose: async () => calls.push({ name: "dispose" }),
    },
  };
}

/** A v2 context whose registrations are kept, with their disposals. */
function context({ refuse } = {}) {
  const registered = [];
  const disposed = [];
  const callbacks = new Map();
  const reg = (kind) => async (name, cb) => {
    if (refuse === `${kind}:${name}`) throw new Error(`${kind}.hook(${name}) refused`);
    registered.push(`${kind}:${name}`);
    callbacks.set(`${kind}:${name}`, cb);
    return { dispose: async () => disposed.push(`${kind}:${name}`) };
  };
  let end;
  const ctx = {
    session: { hook: reg("session") },
    tool: { hook: reg("tool") },
    event: {
      subscribe: () => ({
        [Symbol.asyncIterator]: () => ({
          next: () => new Promise((r) => (end = r)),
          return: async () => (end?.({ done: true, value: undefined }), { done: true, value: undefined }),
        }),
      }),
    },
  };
  return { ctx, registered, disposed, callbacks };
}

for (const [kind, bridged] of [
  [undefined, true],
  ["primary", true],
  ["title", false],
  ["compaction", false],
]) {
  test(`a context request of kind ${kind ?? "(none)"} is ${bridged ? "" : "not "}bridged`, async () => {
    const { hooks, calls } = recordingHooks();
    const { ctx, callbacks } = context();
    const cleanup = await setupV2(ctx, hooks);
    const draft = { sessionID: "ses_1", agent: "build", model: { id: "m", providerID: "p" }, system: [{ type: "text", text: "You are build." }], messages: [] };
    if (kind !== undefined) draft.kind = kind;
    await callbacks.get("session:context")(draft);
    const names = calls.map((c) => c.name);
    if (bridged) {
      assert.ok(names.includes("messages"), `messages transform called: ${names}`);
      assert.ok(names.includes("system"), `system transform called: ${names}`);
    } else {
      assert.deepEqual(names, []);
    }
    await cleanup();
  });
}

for (const [state, status] of [
  ["completed", undefined],
  ["cancelled", "error"],
  ["error", "error"],
]) {
  test(`a background child's notice with state ${state} completes its call ${status ? "as failed" : "as completed"}`, async () => {
    const { hooks, calls } = recordingHooks();
    await bridgeCompletion(hooks, {
      id: "evt_1",
      type: "session.synthetic",
      data: {
        sessionID: "ses_parent",
        description: "Watch the tests",
        text: `<subagent sessionID="ses_child" state="${state}">\n...\n</subagent>`,
        metadata: { source: "subagent", childID: "ses_child", agent: "explore", state },
      },
    });
    const after = calls.find((c) => c.name === "after");
    assert.ok(after, "tool.execute.after is called");
    assert.equal(after.input.status, status);
    assert.equal(after.input.args.sessionID, "ses_child");
  });
}

for (const refused of ["tool:execute.before", "tool:execute.after"]) {
  test(`a setup whose ${refused} registration is refused disposes every registration it made, and throws`, async () => {
    const { hooks } = recordingHooks();
    const { ctx, registered, disposed } = context({ refuse: refused });
    await assert.rejects(setupV2(ctx, hooks), /refused/);
    assert.ok(registered.length > 0, "something was registered before the refusal");
    assert.deepEqual([...disposed].sort(), [...registered].sort(), "and all of it disposed: no hook left registered");
  });
}

test("a setup whose event stream is not iterable disposes its three registrations", async () => {
  const { hooks } = recordingHooks();
  const { ctx, registered, disposed } = context();
  ctx.event.subscribe = () => ({});
  await assert.rejects(setupV2(ctx, hooks));
  assert.deepEqual([...registered].sort(), ["session:context", "tool:execute.after", "tool:execute.before"]);
  assert.deepEqual([...disposed].sort(), [...registered].sort());
});

const { bridgeRetry, bridgeFailure, SubagentCalls } = await import(pathToFileURL(join(shimDir, "dist", "v2.js")).href);

test("the retry bridge: the parent of the call in flight, switchModel and an immediate retry on switch, nothing on none or without switchModel", async () => {
  const calls = new SubagentCalls();
  calls.started({ tool: "subagent", id: "c1", sessionID: "ses_p1", input: { agent: "explore" } });
  calls.started({ tool: "subagent", id: "c2", sessionID: "ses_p2", input: { agent: "general", sessionID: "ses_known" } });
  calls.started({ tool: "read", id: "c3", sessionID: "ses_p3", input: {} });
  assert.equal(calls.parentOf("ses_new", "explore"), "ses_p1", "a new child: the call in flight for its agent");
  assert.equal(calls.parentOf("ses_known", "general"), "ses_p2", "a resumed child: the call that names it");
  assert.equal(calls.parentOf("ses_other", "general"), undefined, "general's call in flight resumes another child");
  calls.ended({ id: "c1" });
  assert.equal(calls.parentOf("ses_new", "explore"), undefined);

  const switched = [];
  const ctx = { session: { switchModel: async (i) => switched.push(i) } };
  const asked = [];
  const answer = { action: "switch", fallback: { providerID: "fake", modelID: "fallback-model" } };
  const services = { modelFailed: async (p) => (asked.push(p), answer) };
  const draft = () => ({ sessionID: "ses_known", agent: "general", model: { providerID: "fake", id: "primary-model" }, error: { type: "provider.rate-limit", message: "Rate limit", status: 429 }, attempt: 2, decision: { retry: true, delay: 2000 } });

  let d = draft();
  await bridgeRetry(ctx, services, calls, d);
  assert.deepEqual(asked[0], { sessionID: "ses_known", error: { statusCode: 429, name: "provider.rate-limit", message: "Rate limit" }, inPlace: true,
    model: { providerID: "fake", modelID: "primary-model" }, agent: "general", attempt: 2, parentID: "ses_p2" });
  assert.deepEqual(switched, [{ sessionID: "ses_known", model: { providerID: "fake", id: "fallback-model" } }]);
  assert.deepEqual(d.decision, { retry: true, delay: 0 });

  answer.action = "none";
  d = draft();
  await bridgeRetry(ctx, services, calls, d);
  assert.deepEqual(d.decision, { retry: true, delay: 2000 }, "none: the runner's own decision");
  assert.equal(switched.length, 1);

  answer.action = "switch";
  d = draft();
  await bridgeRetry({ session: {} }, services, calls, d);
  assert.deepEqual(d.decision, { retry: true, delay: 2000 }, "a host without switchModel: nothing changes");
});

test("the retry bridge bounds switchModel by timeoutMs: one that throws or hangs is given up, the runner's decision stands, the user is told", async () => {
  const calls = new SubagentCalls();
  const answer = { action: "switch", fallback: { providerID: "fake", modelID: "fallback-model" }, reason: "rate-limit: Rate limit" };
  const told = [];
  const services = { modelFailed: async () => answer, timeoutMs: 50, tell: (level, message) => told.push([level, message]) };
  const draft = () => ({ sessionID: "ses_c", agent: "explore", model: { providerID: "fake", id: "primary-model" }, error: { type: "provider.rate-limit", message: "Rate limit", status: 429 }, attempt: 3, decision: { retry: true, delay: 4000 } });
  for (const [what, switchModel, why] of [
    ["throws", async () => {
      throw new Error("boom");
    }, /\(threw: boom\)/],
    ["hangs", () => new Promise(() => {}), /\(no answer within \d+ ms\)/],
  ]) {
    told.length = 0;
    const d = draft();
    await bridgeRetry({ session: { switchModel } }, services, calls, d);
    assert.deepEqual(d.decision, { retry: true, delay: 4000 }, `${what}: the runner's own decision`);
    assert.equal(told.length, 1, what);
    assert.equal(told[0][0], "warn");
    assert.match(told[0][1], /^hookwire: the switch of ses_c from fake\/primary-model to fake\/fallback-model did not apply /);
    assert.match(told[0][1], why);
  }
  told.length = 0;
  const d = draft();
  await bridgeRetry({ session: { switchModel: async () => {} } }, services, calls, d);
  assert.deepEqual(d.decision, { retry: true, delay: 0 });
  assert.deepEqual(told, [["info", "hookwire: fake/primary-model failed (rate-limit: Rate limit); switching ses_c to fake/fallback-model"]]);
});

test("a child's failure events feed health only for a provider's error", async () => {
  const asked = [];
  const services = { modelFailed: async (p) => (asked.push(p), null) };
  await bridgeFailure(services, { type: "session.execution.failed", data: { sessionID: "ses_c", error: { type: "provider.rate-limit", message: "Rate limit", status: 429 } } });
  await bridgeFailure(services, { type: "session.step.failed", data: { sessionID: "ses_c", error: { type: "tool.error", message: "no" } } });
  await bridgeFailure(services, { type: "session.deleted", data: { sessionID: "ses_c" } });
  assert.deepEqual(asked, [{ sessionID: "ses_c", error: { statusCode: 429, name: "provider.rate-limit", message: "Rate limit" } }]);
});

test("the hook mapping comes from the contract: every contract hook is driven by an OpenCode 2 hook the bridge implements, or the contract says why none does", async () => {
  const { HOOKS } = await import(pathToFileURL(join(shimDir, "dist", "contract.gen.js")).href);
  const { BRIDGED_V2_HOOKS } = await import(pathToFileURL(join(shimDir, "dist", "v2.js")).href);
  const contract = JSON.parse(readFileSync(join(shimDir, "..", "contract", "contract.json"), "utf8"));
  for (const h of HOOKS) {
    const row = contract.methods.find((m) => m.name === h.method);
    if (h.opencode2 === null) assert.ok(row.opencode2?.none, `${h.method}: no OpenCode 2 hook, and the contract says why`);
    else assert.ok(BRIDGED_V2_HOOKS.includes(h.opencode2), `${h.method}: ${h.opencode2} is bridged by v2.ts`);
  }
  // And the bridge names no 1.x hook of its own: every one comes from HOOKS.
  const src = readFileSync(join(shimDir, "src", "v2.ts"), "utf8");
  for (const h of HOOKS) assert.doesNotMatch(src, new RegExp(`hooks\\[["']${h.opencodeHook.replace(/\./g, "\\.")}["']\\]`), h.opencodeHook);
});
