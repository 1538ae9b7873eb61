// Catching up on subagents after the sidecar starts (catchup.ts, PROTOCOL.md
// 4.10): the session's children, their assistant messages and their state
// go out as the events the sidecar missed, once per session and sidecar.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SubagentCatchUp } from "../dist/catchup.js";

function fakeClient(over = {}) {
  const calls = [];
  const children = {
    ses_P: [
      { id: "ses_C1", parentID: "ses_P", title: "Find the tests (@explore subagent)", time: { created: 1795993563894 } },
      { id: "ses_C2", parentID: "ses_P", title: "Slow audit (@general subagent)", time: { created: 1795993565000 } },
    ],
    ses_C2: [{ id: "ses_G", parentID: "ses_C2", title: "Deeper (@explore subagent)", time: { created: 1795993566000 } }],
  };
  const messages = {
    ses_C1: [
      { info: { id: "msg_u", role: "user", sessionID: "ses_C1" }, parts: [] },
      { info: { id: "msg_a", role: "assistant", sessionID: "ses_C1", providerID: "fake", modelID: "m", cost: 0.01, tokens: { input: 10, output: 2, reasoning: 0, cache: { read: 0, write: 0 } }, time: { completed: 2 } }, parts: [] },
    ],
  };
  const client = {
    session: {
      children: async ({ path }) => (calls.push(["children", path.id]), { data: children[path.id] ?? [] }),
      messages: async ({ path }) => (calls.push(["messages", path.id]), { data: messages[path.id] ?? [] }),
      status: async () => (calls.push(["status"]), { data: { ses_C2: { type: "retry", attempt: 2, message: "Rate limit", next: 5 } } }),
      ...over,
    },
  };
  return { client, calls };
}

test("a session at work is caught up on once: its children, their assistant messages and their state, children of children too", async () => {
  const { client, calls } = fakeClient();
  const sent = [];
  const c = new SubagentCatchUp(client, (e) => void sent.push(e.event));
  await c.catchUp("ses_P");
  assert.deepEqual(sent.map((e) => [e.type, e.properties.sessionID]), [
    ["session.created", "ses_C1"],
    ["message.updated", "ses_C1"],
    ["session.idle", "ses_C1"],
    ["session.created", "ses_C2"],
    ["session.status", "ses_C2"],
    ["session.created", "ses_G"],
    ["session.idle", "ses_G"],
  ]);
  assert.equal(sent[0].properties.info.parentID, "ses_P");
  assert.equal(sent[1].properties.info.id, "msg_a", "only the assistant's message");
  assert.deepEqual(sent[4].properties.status, { type: "retry", attempt: 2, message: "Rate limit", next: 5 });

  const n = calls.length;
  c.onEvent({ event: { type: "session.status", properties: { sessionID: "ses_P", status: { type: "busy" } } } });
  c.onEvent({ event: { type: "session.idle", properties: { sessionID: "ses_C1" } } });
  await new Promise((r) => setImmediate(r));
  assert.equal(calls.length, n, "once per session: nothing asked again");
  c.reset();
  c.onEvent({ event: { type: "session.status", properties: { sessionID: "ses_P", status: { type: "busy" } } } });
  await new Promise((r) => setTimeout(r, 20));
  assert.ok(calls.length > n, "a new sidecar: caught up on again");
});

test("what runs cannot be asked: nothing is claimed; a client without the calls is not asked", async () => {
  const { client } = fakeClient({ status: async () => { throw new Error("no status"); } });
  const sent = [];
  await new SubagentCatchUp(client, (e) => void sent.push(e)).catchUp("ses_P");
  assert.deepEqual(sent, []);
  const none = new SubagentCatchUp({ session: {} }, (e) => void sent.push(e));
  assert.equal(none.enabled, false);
  none.onEvent({ event: { type: "session.status", properties: { sessionID: "ses_P" } } });
  assert.deepEqual(sent, []);
});

test("a child seen created is never caught up on as a parent of its own", async () => {
  const { client, calls } = fakeClient();
  const c = new SubagentCatchUp(client, () => {});
  c.onEvent({ event: { type: "session.created", properties: { sessionID: "ses_C1", info: { id: "ses_C1", parentID: "ses_P" } } } });
  c.onEvent({ event: { type: "session.status", properties: { sessionID: "ses_C1", status: { type: "busy" } } } });
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(calls, []);
});
