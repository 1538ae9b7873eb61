// The full resend of an incremental chat.messages.transform (PROTOCOL.md
// 4.6), against a sidecar double whose answers the test picks, on node's
// mocked clock: the resend fits in what is left of the hook's one
// deadline, and it is made for each refusal that means "send the full
// form" (-32005, an unknown base; -32602, a change the sidecar cannot
// apply, such as a history over its budget), so the patch still lands.
import assert from "node:assert/strict";
import { afterEach, beforeEach, mock, test } from "node:test";
import { CODE_INVALID_PARAMS, CODE_UNKNOWN_BASE } from "../dist/contract.gen.js";
import { applyPatchInPlace } from "../dist/patch.js";
import { TransformSync } from "../dist/transformsync.js";

beforeEach(() => mock.timers.enable({ apis: ["Date"], now: 0 }));
afterEach(() => mock.timers.reset());

const SESSION = "ses_resend000000000000000001";
const METHOD = "chat.messages.transform";
const message = (id, role, text) => ({
  info: { id, role, sessionID: SESSION, time: { created: 1 }, ...(role === "user" ? { agent: "orchestrator" } : {}) },
  parts: [{ id: `${id}_p`, type: "text", text, time: { start: 1 } }],
});
const history = (n) => Array.from({ length: n }, (_, i) => message(`m${i}`, i % 2 ? "assistant" : "user", `text ${i}`));
const reminder = { type: "text", text: "<internal_reminder>phase</internal_reminder>", synthetic: true };

/**
 * A sidecar double: answer(call) gives each request's CallResult; calls
 * keeps what it was sent (the form, the deadline) and when, on the mocked clock.
 */
function double(answer) {
  const calls = [];
  let base = 0;
  const sidecar = {
    request: async (method, params, deadlineMs) => {
      const call = { method, form: params.sync?.base ? "incremental" : "full", deadlineMs, at: Date.now(), params };
      calls.push(call);
      const r = answer(call, calls.length);
      if (r.ok === true && r.result === undefined) {
        const n = params.output ? params.output.messages.length : params.sync.messages.reduce((k, it) => k + (it.count ?? 1), 0);
        return { ok: true, result: { patch: [{ op: "add", path: `/messages/${n - 1}/parts/-`, value: reminder }], base: `b${++base}` } };
      }
      return r;
    },
  };
  return { sidecar, calls };
}

/** One transform call through sync, as the hook makes it: the output as the reply's patch leaves it. */
async function transform(sync, sidecar, messages, deadlineMs) {
  const output = { messages: structuredClone(messages) };
  const r = await sync.request(sidecar, METHOD, {}, output, deadlineMs);
  if (r?.ok) applyPatchInPlace(output, r.result.patch);
  return { r, output };
}

for (const code of [CODE_UNKNOWN_BASE, CODE_INVALID_PARAMS]) {
  test(`a refusal with ${code} is answered by the full form, within what is left of the one deadline`, async () => {
    const deadline = 2000;
    const { sidecar, calls } = double((call, n) => {
      if (n === 2) {
        mock.timers.tick(1500); // the refusal comes late
        return { ok: false, reason: "error", code, detail: "send the full form" };
      }
      return { ok: true };
    });
    const sync = new TransformSync();
    await transform(sync, sidecar, history(3), deadline);
    const { r, output } = await transform(sync, sidecar, history(5), deadline);

    assert.deepEqual(calls.map((c) => c.form), ["full", "incremental", "full"], "resent in full");
    assert.equal(calls[2].params.output.messages.length, 5);
    const resend = calls[2];
    const started = calls[1].at;
    assert.ok(resend.at - started + resend.deadlineMs <= deadline, `the resend ends by the hook's deadline: sent ${resend.at - started} ms in, given ${resend.deadlineMs} ms`);
    assert.equal(resend.deadlineMs, 500);
    assert.ok(r.ok, "the call succeeds");
    assert.deepEqual(output.messages[4].parts.at(-1), reminder, "the reminder lands");

    // And the next request goes incremental again, from the new base.
    const next = await transform(sync, sidecar, history(6), deadline);
    assert.equal(calls.at(-1).form, "incremental");
    assert.equal(calls.at(-1).params.sync.base, "b2", "the base the full resend made");
    assert.deepEqual(next.output.messages[5].parts.at(-1), reminder);
  });
}

test("other refusals are not resent: the hook fails open once", async () => {
  for (const failure of [
    { ok: false, reason: "error", code: -32603, detail: "internal" },
    { ok: false, reason: "timeout" },
  ]) {
    const { sidecar, calls } = double((call, n) => (n === 2 ? failure : { ok: true }));
    const sync = new TransformSync();
    await transform(sync, sidecar, history(3), 2000);
    const { r } = await transform(sync, sidecar, history(5), 2000);
    assert.equal(r.ok, false);
    assert.deepEqual(calls.map((c) => c.form), ["full", "incremental"], JSON.stringify(failure));
  }
});
