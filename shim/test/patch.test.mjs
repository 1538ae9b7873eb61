import assert from "node:assert/strict";
import { test } from "node:test";
import { applyPatchInPlace, isPatch } from "../dist/patch.js";

test("add, replace and remove change the same objects in place", () => {
  const args = { task_id: "exp-1", prompt: "p" };
  const system = ["a"];
  const output = { args, system, messages: [{ parts: [{ type: "text" }] }] };
  const r = applyPatchInPlace(output, [
    { op: "replace", path: "/args/task_id", value: "ses_1" },
    { op: "add", path: "/system/-", value: "block" },
    { op: "add", path: "/messages/0/parts/-", value: { type: "text", text: "r", synthetic: true } },
    { op: "remove", path: "/args/prompt" },
  ]);
  assert.deepEqual(r, { ok: true, applied: 4 });
  assert.equal(output.args, args);
  assert.equal(output.system, system);
  assert.deepEqual(args, { task_id: "ses_1" });
  assert.deepEqual(system, ["a", "block"]);
  assert.equal(output.messages[0].parts.length, 2);
});

test("a patch whose later op fails leaves output exactly as it was", () => {
  const output = { args: { task_id: "exp-1", keep: [1, 2, 3] }, system: ["a"] };
  const before = structuredClone(output);
  const r = applyPatchInPlace(output, [
    { op: "replace", path: "/args/task_id", value: "ses_1" },
    { op: "add", path: "/system/-", value: "x" },
    { op: "add", path: "/args/keep/1", value: 9 },
    { op: "remove", path: "/args/keep/0" },
    { op: "add", path: "/args/new", value: 1 },
    { op: "replace", path: "/missing/deep", value: 1 },
  ]);
  assert.equal(r.ok, false);
  assert.deepEqual(output, before);
});

test("replace and remove of a missing path fail; add beyond the end fails", () => {
  for (const op of [
    { op: "replace", path: "/args/nope", value: 1 },
    { op: "remove", path: "/args/nope" },
    { op: "add", path: "/list/5", value: 1 },
    { op: "replace", path: "/list/3", value: 1 },
    { op: "add", path: "/args/a/b", value: 1 },
  ]) {
    const output = { args: { a: 1 }, list: [1, 2] };
    assert.equal(applyPatchInPlace(output, [op]).ok, false, JSON.stringify(op));
    assert.deepEqual(output, { args: { a: 1 }, list: [1, 2] });
  }
});

test("malformed patches are refused before touching output", () => {
  const bad = [
    null,
    "x",
    {},
    [{ op: "move", from: "/a", path: "/b" }],
    [{ op: "copy", from: "/a", path: "/b" }],
    [{ op: "test", path: "/a", value: 1 }],
    [{ op: "add", path: "a", value: 1 }],
    [{ op: "add", path: "/a" }],
    [{ op: "replace", path: "", value: {} }],
    [null],
  ];
  for (const patch of bad) {
    const output = { a: 1 };
    assert.equal(isPatch(patch), false, JSON.stringify(patch));
    assert.equal(applyPatchInPlace(output, patch).ok, false);
    assert.deepEqual(output, { a: 1 });
  }
  assert.deepEqual(applyPatchInPlace({ a: 1 }, []), { ok: true, applied: 0 });
});

test("prototype pollution is refused", () => {
  const output = { a: {} };
  const r = applyPatchInPlace(output, [{ op: "add", path: "/__proto__/polluted", value: true }]);
  assert.equal(r.ok, false);
  assert.equal({}.polluted, undefined);
  const r2 = applyPatchInPlace(output, [{ op: "add", path: "/a/constructor/prototype/polluted", value: true }]);
  assert.equal(r2.ok, false);
  assert.equal({}.polluted, undefined);
});

test("inherited members are not in the document: replace or remove of one fails, and no path goes through one", () => {
  const cases = [
    { op: "replace", path: "/args/toString", value: "x" },
    { op: "replace", path: "/args/hasOwnProperty", value: 1 },
    { op: "remove", path: "/args/valueOf" },
    { op: "replace", path: "/args/constructor", value: null },
    { op: "add", path: "/args/constructor/polluted", value: true }, // Object itself
    { op: "add", path: "/args/toString/polluted", value: true }, // Object.prototype.toString
    { op: "replace", path: "/list/0/isPrototypeOf", value: 1 },
  ];
  for (const op of cases) {
    const output = { args: { a: 1 }, list: [{}] };
    const r = applyPatchInPlace(output, [{ op: "add", path: "/args/b", value: 2 }, op]);
    assert.equal(r.ok, false, JSON.stringify(op));
    assert.deepEqual(output, { args: { a: 1 }, list: [{}] }, JSON.stringify(op));
    assert.equal(Object.keys(output.args).join(), "a", `no own property left by ${JSON.stringify(op)}`);
  }
  assert.equal(Object.polluted, undefined);
  assert.equal(Object.prototype.toString.polluted, undefined);
  // A member named like an inherited one is an ordinary JSON member: add
  // creates it, and then replace and remove find it.
  const output = { args: {} };
  assert.deepEqual(applyPatchInPlace(output, [{ op: "add", path: "/args/toString", value: "t" }]), { ok: true, applied: 1 });
  assert.deepEqual(applyPatchInPlace(output, [{ op: "replace", path: "/args/toString", value: "u" }]), { ok: true, applied: 1 });
  assert.equal(output.args.toString, "u");
  assert.deepEqual(applyPatchInPlace(output, [{ op: "remove", path: "/args/toString" }]), { ok: true, applied: 1 });
  assert.deepEqual(Object.keys(output.args), []);
});

test("frozen or odd outputs fail without throwing", () => {
  const frozen = Object.freeze({ args: Object.freeze({ task_id: "x" }) });
  // A frozen object cannot change; whatever the library reports, nothing throws.
  applyPatchInPlace(frozen, [{ op: "replace", path: "/args/task_id", value: "y" }]);
  assert.equal(frozen.args.task_id, "x");
  assert.equal(applyPatchInPlace(null, [{ op: "add", path: "/a", value: 1 }]).ok, false);
  assert.equal(applyPatchInPlace(42, [{ op: "add", path: "/a", value: 1 }]).ok, false);
  const cyclic = { a: {} };
  cyclic.a.self = cyclic;
  assert.equal(applyPatchInPlace(cyclic, [{ op: "add", path: "/a/x", value: 1 }]).ok, true);
  assert.equal(cyclic.a.x, 1);
});

test("escaped pointer segments (~0, ~1) address the right keys and roll back", () => {
  const output = { m: { "a/b": 1, "c~d": 2 } };
  assert.equal(applyPatchInPlace(output, [{ op: "replace", path: "/m/a~1b", value: 3 }, { op: "remove", path: "/m/c~0d" }]).ok, true);
  assert.deepEqual(output, { m: { "a/b": 3 } });
  assert.equal(applyPatchInPlace(output, [{ op: "replace", path: "/m/a~1b", value: 4 }, { op: "remove", path: "/m/zz" }]).ok, false);
  assert.deepEqual(output, { m: { "a/b": 3 } });
});

test("parts appended to messages (the sidecar's common op) roll back, and bad targets fail as any add", () => {
  const parts = [{ type: "text", text: "u" }];
  const output = { messages: [{ parts }, { parts: [] }] };
  const before = structuredClone(output);
  const r = applyPatchInPlace(output, [
    { op: "add", path: "/messages/0/parts/-", value: { type: "text", text: "block", synthetic: true } },
    { op: "add", path: "/messages/0/parts/-", value: { type: "text", text: "reminder", synthetic: true } },
    { op: "add", path: "/messages/1/parts/-", value: { type: "text", text: "block", synthetic: true } },
    { op: "replace", path: "/messages/0/parts/9/text", value: "x" },
  ]);
  assert.equal(r.ok, false);
  assert.deepEqual(output, before);
  assert.equal(output.messages[0].parts, parts, "the same array, put back in place");

  const ok = applyPatchInPlace(output, [
    { op: "add", path: "/messages/0/parts/-", value: { type: "text", text: "block", synthetic: true } },
    { op: "add", path: "/messages/1/parts/-", value: { type: "text", text: "r", synthetic: true } },
  ]);
  assert.deepEqual(ok, { ok: true, applied: 2 });
  assert.deepEqual(output.messages[0].parts.map((p) => p.text), ["u", "block"]);
  assert.deepEqual(output.messages[1].parts.map((p) => p.text), ["r"]);

  for (const [doc, path] of [
    [{ messages: [{ parts: [] }] }, "/messages/1/parts/-"],
    [{ messages: [{}] }, "/messages/0/parts/-"],
    [{ messages: [{ parts: "no" }] }, "/messages/0/parts/-"],
    [{ messages: {} }, "/messages/0/parts/-"],
    [{}, "/messages/0/parts/-"],
  ]) {
    const copy = structuredClone(doc);
    assert.equal(applyPatchInPlace(doc, [{ op: "add", path, value: { type: "text" } }]).ok, false, JSON.stringify(doc));
    assert.deepEqual(doc, copy);
  }
});

test("guidance on an errored part (the other common op) rolls back, and odd targets behave as fast-json-patch says", async () => {
  const state = { status: "error", error: "Unknown agent type: x" };
  const output = { messages: [{ parts: [{ type: "tool", state }] }] };
  const r = applyPatchInPlace(output, [
    { op: "replace", path: "/messages/0/parts/0/state/error", value: "Unknown agent type: x\n[guidance]" },
    { op: "replace", path: "/messages/0/parts/3/state/error", value: "nope" },
  ]);
  assert.equal(r.ok, false);
  assert.equal(output.messages[0].parts[0].state, state, "the same object");
  assert.equal(state.error, "Unknown agent type: x", "put back");
  assert.deepEqual(applyPatchInPlace(output, [{ op: "replace", path: "/messages/0/parts/0/state/error", value: "guided" }]), { ok: true, applied: 1 });
  assert.equal(state.error, "guided");

  // Each of these takes the general path; the result is fast-json-patch's own.
  const { default: fjp } = await import("fast-json-patch");
  for (const doc of [
    { messages: [{ parts: [{ state: {} }] }] }, // no error member: replace fails
    { messages: [{ parts: [{ state: [] }] }] },
    { messages: [{ parts: [{}] }] },
    { messages: [{ parts: [] }] },
    { messages: {} },
    { messages: [{ parts: [{ state: { error: 1 } }] }] },
  ]) {
    const op = { op: "replace", path: "/messages/0/parts/0/state/error", value: "g" };
    const mine = structuredClone(doc);
    const theirs = structuredClone(doc);
    let want = true;
    try {
      fjp.applyOperation(theirs, structuredClone(op), true, true, true);
    } catch {
      want = false;
    }
    assert.equal(applyPatchInPlace(mine, [op]).ok, want, JSON.stringify(doc));
    assert.deepEqual(mine, want ? theirs : doc, JSON.stringify(doc));
  }
});
