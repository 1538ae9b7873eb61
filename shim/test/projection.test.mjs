import assert from "node:assert/strict";
import { test } from "node:test";
import { projectMessages } from "../dist/projection.js";
import { INFO_READS, PART_READS } from "../dist/contract.gen.js";
import { fixture } from "./helpers.mjs";

const infoFields = INFO_READS.map((f) => f.path);
const partMembers = [...new Set(PART_READS.map((f) => f.path.split(".")[0]))];

test("projection keeps exactly the PROTOCOL.md 4.5 fields and every index", () => {
  const { output } = fixture("messages-transform.json");
  const p = projectMessages(output);
  assert.equal(p.messages.length, output.messages.length);
  output.messages.forEach((m, i) => {
    const pm = p.messages[i];
    assert.deepEqual(Object.keys(pm.info).sort(), infoFields.filter((k) => k in m.info).sort());
    assert.equal(pm.parts.length, m.parts.length);
    m.parts.forEach((part, j) => {
      const pp = pm.parts[j];
      for (const k of Object.keys(pp)) assert.ok(partMembers.includes(k), k);
      assert.equal(pp.type, part.type);
      assert.equal(pp.callID, part.callID);
      if (part.state) assert.deepEqual(pp.state, { status: part.state.status, ...(typeof part.state.error === "string" ? { error: part.state.error } : {}) });
    });
  });
  const json = JSON.stringify(p);
  assert.ok(!json.includes("task_result"), "tool outputs are dropped");
  assert.ok(!json.includes("metadata"));
  assert.ok(json.length < JSON.stringify(output).length / 3, `projection ${json.length} B vs ${JSON.stringify(output).length} B`);
  assert.ok(json.includes("Unknown agent type: nonexistent"), "errors are kept");
});

test("odd histories project without throwing and keep positions", () => {
  const odd = {
    messages: [null, 5, { info: null, parts: null }, { info: { id: 1, role: "user", agent: ["x"] }, parts: [null, "s", { type: 3, text: {}, state: "x" }, { type: "tool", state: { status: "error", error: 5 } }] }],
  };
  const p = projectMessages(odd);
  assert.equal(p.messages.length, 4);
  assert.deepEqual(p.messages[0], { info: {}, parts: [] });
  assert.deepEqual(p.messages[3], { info: { role: "user" }, parts: [{}, {}, {}, { type: "tool", state: { status: "error" } }] });
  assert.equal(projectMessages(null), undefined);
  // A reasoning part's text is left out (PROTOCOL.md 4.5: the sidecar does not read it); other texts stay.
  const thought = projectMessages({ messages: [{ info: { id: "m" }, parts: [{ type: "reasoning", text: "hmm" }, { type: "text", text: "hi" }, { text: "no type" }] }] });
  assert.deepEqual(thought.messages[0].parts, [{ type: "reasoning" }, { type: "text", text: "hi" }, { text: "no type" }]);
  assert.equal(projectMessages({ messages: "no" }), undefined);
});
