// OpenCode 1.x's abort-and-resend path when the switch does not take
// (issue 49; PROTOCOL.md 4.8 "Asked again"): the sidecar's answer comes
// after the call's deadline, or the resend fails. The switch stays pending
// in the store, and the next failure (OpenCode's next retry, a later
// attempt) is free to switch; the real sidecar behind a pipe that slips
// its answer (fixtures/slip-sidecar.mjs).
import assert from "node:assert/strict";
import { test } from "node:test";
import { join } from "node:path";
import { createHookwire } from "../dist/plugin.js";
import { alive, realSidecar, scratch, shimDir, sleep, waitFor } from "./helpers.mjs";

const slipSidecar = join(shimDir, "test", "fixtures", "slip-sidecar.mjs");

/** An OpenCode SDK client that records the aborts, resends and toasts. */
function client1x({ resendFails = 0 } = {}) {
  const calls = { abort: [], promptAsync: [], toasts: [] };
  let failing = resendFails;
  const client = {
    app: { log: () => Promise.resolve(true), agents: async () => ({ data: [] }) },
    tui: { showToast: (o) => (calls.toasts.push(o.body.message), Promise.resolve({ data: true })) },
    config: {
      providers: async () => ({ data: { providers: [{ id: "fake", models: { "fake-model": {}, "fake-model-2": {}, "fake-model-3": {} } }], default: { fake: "fake-model" } } }),
    },
    session: {
      abort: async (o) => (calls.abort.push(o.path.id), { data: true }),
      messages: async () => ({ data: [{ info: { role: "user", agent: "orchestrator" }, parts: [{ type: "text", text: "Do it." }] }] }),
      promptAsync: async (o) => {
        calls.promptAsync.push(o);
        if (failing-- > 0) throw new Error("resend refused (fault)");
        return {};
      },
    },
  };
  return { client, calls };
}

const retryEvent = (session, attempt) => ({
  event: { type: "session.status", properties: { sessionID: session, status: { type: "retry", attempt, message: "Rate limit reached for fake-model-3", next: Date.now() + 2000 } } },
});

test("1.x: the answer to a subagent's failure comes late: the child's next retry is aborted for the fallback", { timeout: 60000 }, async () => {
  const s = scratch();
  Object.assign(process.env, { SLIP_BIN: realSidecar(), SLIP_MODE: "late", SLIP_MARK: join(s.dir, "slipped"), SLIP_LATE_MS: "900" });
  const { client, calls } = client1x();
  const config = { agentModels: { explorer: { fallbackModels: ["fake/fake-model-2"] } } };
  const h = createHookwire({ client }, { binary: slipSidecar, trace: s.trace, logFile: s.log, timeoutMs: 500, state: false, ...config }, { ...process.env, HOME: s.dir });
  try {
    const msg = (session, agent, modelID) => ({ message: { id: "m", role: "user", sessionID: session, agent, model: { providerID: "fake", modelID } }, parts: [] });
    await h.hooks["chat.message"]({ sessionID: "ses_p", agent: "orchestrator" }, msg("ses_p", "orchestrator", "fake-model"));
    await h.hooks.event({ event: { type: "session.created", properties: { sessionID: "ses_c", info: { id: "ses_c", parentID: "ses_p", agent: "explorer" } } } });
    await h.hooks["chat.message"]({ sessionID: "ses_c", agent: "explorer" }, msg("ses_c", "explorer", "fake-model-3"));

    await h.hooks.event(retryEvent("ses_c", 1));
    await waitFor(() => s.records().some((r) => r.ev === "reply" && r.method === "model.failed" && !r.ok), 3000);
    await sleep(600); // the late answer arrives, to nobody
    assert.deepEqual(calls.abort, [], "the late answer aborted nothing");

    await h.hooks.event(retryEvent("ses_c", 2));
    await waitFor(() => calls.abort.length > 0, 3000);
    assert.deepEqual(calls.abort, ["ses_c"], "the next retry, still on the cooling model, is aborted for the fallback");
  } finally {
    const pid = h.sidecar.pid;
    await h.dispose();
    await waitFor(() => !alive(pid), 3000);
    for (const k of ["SLIP_BIN", "SLIP_MODE", "SLIP_MARK", "SLIP_LATE_MS"]) delete process.env[k];
    s.cleanup();
  }
});

test("1.x: a resend that fails is told, and the session's next retry is resent on the fallback", { timeout: 60000 }, async () => {
  const s = scratch();
  const { client, calls } = client1x({ resendFails: 1 });
  const config = { agentModels: { orchestrator: { fallbackModels: ["fake/fake-model-2"] } } };
  const h = createHookwire({ client }, { binary: realSidecar(), trace: s.trace, logFile: s.log, timeoutMs: 3000, state: false, ...config }, { ...process.env, HOME: s.dir });
  try {
    const msg = { message: { id: "m", role: "user", sessionID: "ses_u", agent: "orchestrator", model: { providerID: "fake", modelID: "fake-model-3" } }, parts: [] };
    await h.hooks["chat.message"]({ sessionID: "ses_u", agent: "orchestrator" }, msg);
    await h.hooks.event(retryEvent("ses_u", 1));
    await waitFor(() => calls.toasts.some((t) => /did not apply/.test(t)), 3000);
    assert.match(calls.toasts.find((t) => /did not apply/.test(t)), /the switch of ses_u to fake\/fake-model-2 did not apply \(Error: resend refused \(fault\)\); the next failure asks again/);

    await h.hooks.event(retryEvent("ses_u", 2));
    await waitFor(() => calls.promptAsync.length === 2, 3000);
    assert.deepEqual(calls.promptAsync[1].body.model, { providerID: "fake", modelID: "fake-model-2" }, "resent on the fallback");
    assert.deepEqual(calls.abort, ["ses_u", "ses_u"]);
  } finally {
    const pid = h.sidecar.pid;
    await h.dispose();
    await waitFor(() => !alive(pid), 3000);
    s.cleanup();
  }
});
