// Incremental chat.messages.transform (PROTOCOL.md 4.6) against the real
// sidecar: the shim sends only what changed since the base the sidecar
// acknowledged, and OpenCode's output ends up exactly as the full form
// leaves it, through random history edits and sidecar restarts.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { applyPatchInPlace } from "../dist/patch.js";
import { createHookwire, forgetDeleted } from "../dist/plugin.js";
import { projectMessages } from "../dist/projection.js";
import { TransformSync, CODE_UNKNOWN_BASE } from "../dist/transformsync.js";
import { alive, fakeClient, lineClient, realSidecar, scratch, waitFor } from "./helpers.mjs";

const SESSION = "ses_sync0000000000000000001";
const clone = (v) => JSON.parse(JSON.stringify(v));

// ---- TransformSync alone: what it sends for each kind of edit ----------

const message = (id, role, parts, extra = {}) => ({
  info: { id, role, sessionID: SESSION, time: { created: 1 }, ...(role === "user" ? { agent: "orchestrator" } : {}), ...extra },
  parts,
});
const text = (id, t) => ({ id, type: "text", text: t, time: { start: 1 } });
const task = (id, callID, status, error) => ({
  id,
  type: "tool",
  tool: "task",
  callID,
  state: { status, input: { prompt: "long ".repeat(50) }, ...(error ? { error } : { output: "result ".repeat(100) }) },
});

/** A TransformSync whose every call is acknowledged with a fresh base. */
function acked() {
  const sync = new TransformSync();
  let n = 0;
  return {
    sync,
    send(output) {
      const p = sync.prepare({}, output);
      p.commit({ patch: [], base: `b${++n}` });
      return p.params;
    },
  };
}

test("TransformSync: first call in full with sync, then only what changed", () => {
  const { send } = acked();
  const h = [message("m1", "user", [text("p1", "hi")]), message("m2", "assistant", [task("p2", "c1", "running"), text("p3", "ok")])];
  const first = send({ messages: clone(h) });
  assert.deepEqual(first.sync, { session: SESSION });
  assert.deepEqual(first.output, projectMessages({ messages: h }));

  h.push(message("m3", "user", [text("p4", "more")]));
  const grown = send({ messages: clone(h) });
  assert.equal(grown.output, undefined);
  assert.deepEqual(grown.sync, {
    session: SESSION,
    base: "b1",
    messages: [{ keep: 0, count: 2 }, { message: projectMessages({ messages: [h[2]] }).messages[0] }],
    reapply: true,
  });

  h[1].parts[0] = task("p2", "c1", "error", "Unknown agent type: x is not a valid agent type");
  const failed = send({ messages: clone(h) });
  assert.deepEqual(failed.sync.messages, [
    { keep: 0, count: 1 },
    { edit: 1, parts: [{ part: { type: "tool", tool: "task", callID: "c1", state: { status: "error", error: "Unknown agent type: x is not a valid agent type" } } }, { keep: 1, count: 1 }] },
    { keep: 2, count: 1 },
  ]);

  // Compaction: the first two messages become a summary; revert drops the tail.
  const compacted = [message("m9", "assistant", [text("p9", "summary")]), h[2]];
  assert.deepEqual(send({ messages: clone(compacted) }).sync.messages, [
    { message: projectMessages({ messages: [compacted[0]] }).messages[0] },
    { keep: 2, count: 1 },
  ]);
  assert.deepEqual(send({ messages: clone(compacted.slice(0, 1)) }).sync.messages, [{ keep: 0, count: 1 }]);
  // An agent that changed is an info edit; fields the sidecar does not read change nothing.
  const edited = clone(compacted.slice(0, 1));
  edited[0].info.agent = "explorer";
  edited[0].parts[0].time = { start: 2, end: 3 };
  assert.deepEqual(send({ messages: edited }).sync.messages, [{ edit: 0, info: { id: "m9", role: "assistant", agent: "explorer", sessionID: SESSION } }]);
});

test("TransformSync: odd parts (null, a state that is not an object, odd field types) are kept when unchanged and edited when changed", () => {
  const { send } = acked();
  const odd = [null, { type: "tool", tool: "task", callID: "c", state: null }, { type: "tool", state: [1] }, { type: 7, text: 8, synthetic: "yes" }, "str"];
  const h = [message("m1", "user", [text("p1", "hi")]), { info: { id: "m2", role: "assistant", sessionID: SESSION }, parts: odd }];
  send({ messages: clone(h) });
  assert.deepEqual(send({ messages: clone(h) }).sync.messages.slice(0, 1), [{ keep: 0, count: 1 }]);
  // Odd field types read as changed (an edit, never a wrong keep); the rest is kept.
  const again = send({ messages: clone(h) }).sync.messages;
  assert.equal(again[0].keep, 0);
  assert.deepEqual(again[1].parts, [{ keep: 0, count: 3 }, { part: {} }, { keep: 4, count: 1 }]);
  // A state that becomes an object is a changed part.
  const h2 = clone(h);
  h2[1].parts[1].state = { status: "error", error: "Unknown agent type: x" };
  const edited = send({ messages: clone(h2) }).sync.messages[1];
  assert.equal(edited.edit, 1);
  assert.deepEqual(edited.parts[1], { part: { type: "tool", tool: "task", callID: "c", state: { status: "error", error: "Unknown agent type: x" } } });
});

test("TransformSync: a reasoning part's text is not sent (the sidecar does not read it, PROTOCOL.md 4.5), so its change is no edit", () => {
  const { send } = acked();
  const thinking = (t) => ({ id: "r1", type: "reasoning", text: t, time: { start: 1 } });
  const h = [message("m1", "user", [text("p1", "hi")]), message("m2", "assistant", [thinking("let me think ".repeat(200)), text("p2", "ok")])];
  const first = send({ messages: clone(h) });
  assert.deepEqual(first.output.messages[1].parts, [{ type: "reasoning" }, { type: "text", text: "ok" }]);
  assert.ok(!JSON.stringify(first).includes("let me think"));
  h[1].parts[0] = thinking("thought again");
  assert.deepEqual(send({ messages: clone(h) }).sync.messages, [{ keep: 0, count: 2 }]);
  // A part that becomes reasoning, or stops being, is an edit as any type change is.
  h[1].parts[0].type = "text";
  assert.deepEqual(send({ messages: clone(h) }).sync.messages[1], { edit: 1, parts: [{ part: { type: "text", text: "thought again" } }, { keep: 1, count: 1 }] });
});

test("TransformSync: the id index carried from base to base stays right through growth, take-backs and reorders", () => {
  const { send } = acked();
  const m = (id) => message(id, "user", [text(`p${id}`, id)]);
  const projected = (id) => projectMessages({ messages: [m(id)] }).messages[0];
  const steps = [
    [["a", "b", "c"], undefined],
    [["a", "b", "c", "d"], [{ keep: 0, count: 3 }, { message: projected("d") }]],
    [["a", "b", "c", "d", "e"], [{ keep: 0, count: 4 }, { message: projected("e") }]],
    [["a", "b"], [{ keep: 0, count: 2 }]],
    // c, d and e left with the take-back: new messages now, not keeps of positions past the base.
    [["a", "b", "c", "d"], [{ keep: 0, count: 2 }, { message: projected("c") }, { message: projected("d") }]],
    [["b", "a", "d", "c", "e"], [{ keep: 1, count: 1 }, { keep: 0, count: 1 }, { keep: 3, count: 1 }, { keep: 2, count: 1 }, { message: projected("e") }]],
    [["b", "a", "d", "c", "e", "a"], [{ keep: 0, count: 5 }, { keep: 1, count: 1 }]],
  ];
  for (const [ids, want] of steps) {
    const params = send({ messages: clone(ids.map(m)) });
    if (want) assert.deepEqual(params.sync.messages, want, ids.join(","));
  }
});

test("TransformSync: no session id, no sync; a reply without base forgets the session; bounds", () => {
  const sync = new TransformSync({ maxSessions: 2, maxBytes: 4000 });
  const anon = sync.prepare({}, { messages: [{ info: { id: "m1" }, parts: [] }] });
  assert.equal(anon.params.sync, undefined);
  assert.equal(sync.prepare({}, { messages: "no" }), undefined);

  const h = (s) => ({ messages: [{ info: { id: "m1", sessionID: s }, parts: [{ type: "text", text: "x" }] }] });
  for (const s of ["a", "b", "c"]) sync.prepare({}, h(s)).commit({ patch: [], base: s });
  assert.equal(sync.stats.sessions, 2, "the least recently used went");
  assert.equal(sync.prepare({}, h("a")).incremental, false);
  assert.equal(sync.prepare({}, h("c")).incremental, true);
  sync.prepare({}, h("c")).commit({ patch: [] });
  assert.equal(sync.prepare({}, h("c")).incremental, false, "no base in the reply: full next time");
  const big = { messages: [{ info: { id: "m1", sessionID: "d" }, parts: [{ type: "text", text: "x".repeat(4000) }] }] };
  sync.prepare({}, big).commit({ patch: [], base: "d" });
  assert.equal(sync.prepare({}, big).incremental, false, "over the budget alone: not held");
});

test("session.deleted drops that session's base at once; other events and sessions keep theirs", () => {
  const sync = new TransformSync();
  const h = (s) => ({ messages: [{ info: { id: "m1", sessionID: s }, parts: [{ type: "text", text: "x" }] }] });
  for (const s of ["a", "b"]) sync.prepare({}, h(s)).commit({ patch: [], base: s });
  const held = sync.stats.bytes;
  forgetDeleted(sync, { event: { type: "session.updated", properties: { info: { id: "a" } } } });
  forgetDeleted(sync, { event: { type: "session.deleted", properties: { info: { id: "zzz" } } } });
  forgetDeleted(sync, undefined);
  assert.equal(sync.stats.sessions, 2, "only a deleted session that is held goes");
  forgetDeleted(sync, { event: { type: "session.deleted", properties: { sessionID: "a", info: { id: "a" } } } });
  assert.equal(sync.stats.sessions, 1);
  assert.ok(sync.stats.bytes < held && sync.stats.bytes > 0, "its bytes are no longer counted");
  assert.equal(sync.prepare({}, h("a")).incremental, false, "a deleted session starts over in full");
  assert.equal(sync.prepare({}, h("b")).incremental, true, "the other keeps its base");
});

test("reapply runs: a message gets the ops its base message got, at its new place, as copies; runs that do not fit are refused", () => {
  const sync = new TransformSync();
  const h = [message("m1", "user", [text("p1", "hi")]), message("m2", "assistant", [task("p2", "c1", "error", "boom")])];
  const reminder = { type: "text", text: "<internal_reminder>r</internal_reminder>", synthetic: true };
  const first = sync.prepare({}, { messages: clone(h) });
  const guided = { op: "replace", path: "/messages/1/parts/0/state/error", value: "boom\n[guidance]" };
  const taken = first.commit({ patch: [guided, { op: "add", path: "/messages/0/parts/-", value: reminder }], base: "b1" });
  assert.equal(taken.ok, true);
  assert.equal(taken.patch.length, 2, "the full form's patch as it came");

  // A message put in front: the two base messages move down by one.
  const grown = [message("m0", "user", [text("p0", "first")]), ...h];
  const p = sync.prepare({}, { messages: clone(grown) });
  assert.equal(p.params.sync.reapply, true);
  const own = { op: "add", path: "/messages/0/parts/-", value: { ...reminder } };
  const r = p.commit({ patch: [own], reapply: [{ at: 1, keep: 0, count: 2 }], base: "b2" });
  assert.equal(r.ok, true);
  assert.deepEqual(r.patch, [
    own,
    { op: "add", path: "/messages/1/parts/-", value: reminder },
    { op: "replace", path: "/messages/2/parts/0/state/error", value: "boom\n[guidance]" },
  ]);
  r.patch[1].value.text = "changed by OpenCode";
  const bytes = sync.stats.bytes;
  // The next call reapplies what message 1 got, as it came.
  const again = sync.prepare({}, { messages: clone(grown) });
  const r2 = again.commit({ patch: [], reapply: [{ at: 0, keep: 0, count: 3 }], base: "b3" });
  assert.deepEqual(r2.patch.map((o) => [o.path, o.value.text ?? o.value]), [
    ["/messages/0/parts/-", reminder.text],
    ["/messages/1/parts/-", reminder.text],
    ["/messages/2/parts/0/state/error", "boom\n[guidance]"],
  ]);
  assert.equal(sync.stats.bytes, bytes, "the same history and ops count the same bytes, however often they are reapplied");

  for (const [why, reply] of [
    ["past the history", { patch: [], reapply: [{ at: 2, keep: 0, count: 2 }], base: "x" }],
    ["past the base", { patch: [], reapply: [{ at: 0, keep: 2, count: 2 }], base: "x" }],
    ["overlapping", { patch: [], reapply: [{ at: 0, keep: 0, count: 2 }, { at: 1, keep: 1, count: 1 }], base: "x" }],
    ["not a count", { patch: [], reapply: [{ at: 0, keep: 0, count: 0 }], base: "x" }],
    ["an op in a covered message", { patch: [own], reapply: [{ at: 0, keep: 0, count: 1 }], base: "x" }],
  ]) {
    const bad = sync.prepare({}, { messages: clone(grown) });
    assert.equal(bad.incremental, true, why);
    const out = bad.commit(reply);
    assert.equal(out.ok, false, why);
    assert.equal(sync.prepare({}, { messages: clone(grown) }).incremental, false, `${why}: the session starts over in full`);
    sync.prepare({}, { messages: clone(grown) }).commit({ patch: [], base: "b4" });
  }
  // Runs on a full-form reply name no base.
  const fresh = new TransformSync();
  assert.equal(fresh.prepare({}, { messages: clone(h) }).commit({ patch: [], reapply: [{ at: 0, keep: 0, count: 1 }], base: "b" }).ok, false);
  // An op that is not under /messages/I still applies, but nothing is held.
  const odd = fresh.prepare({}, { messages: clone(h) }).commit({ patch: [{ op: "add", path: "/other", value: 1 }], base: "b" });
  assert.equal(odd.ok, true);
  assert.equal(odd.patch.length, 1);
  assert.equal(fresh.prepare({}, { messages: clone(h) }).incremental, false);
});

// ---- Against the real sidecar -----------------------------------------

/** A bare line-framed client of its own sidecar, sending the full form without sync: the reference. */
async function fullClient(initParams) {
  const { call, stop } = lineClient(realSidecar(), ["--log-level", "warn"]);
  const init = await call("initialize", initParams);
  assert.ok(init.result, JSON.stringify(init));
  return {
    call,
    async transform(output) {
      const r = await call("chat.messages.transform", { input: {}, output: projectMessages(output) });
      assert.ok(r.result, JSON.stringify(r));
      assert.equal(applyPatchInPlace(output, r.result.patch).ok, true);
    },
    stop,
  };
}

let h, s, ref;

before(async () => {
  s = scratch();
  const fc = fakeClient({ agents: [{ name: "explorer", mode: "subagent" }, { name: "oracle", mode: "subagent" }, { name: "orchestrator", mode: "primary" }] });
  h = createHookwire({ client: fc.client }, { binary: realSidecar(), trace: s.trace, logFile: s.log, state: false, timeoutMs: 4000, transformTimeoutMs: 8000 }, process.env);
  await waitFor(() => h.sidecar.state === "ready", 10_000);
  const init = s.records().find((r) => r.ev === "call" && r.method === "initialize");
  ref = await fullClient(init.params);
});

after(async () => {
  const pid = h.sidecar.pid;
  ref.stop();
  await h.dispose();
  await waitFor(() => !alive(pid), 3000);
  s.cleanup();
});

/** The transform calls the shim made since the trace had n records, with their replies. */
function transformCalls(from) {
  return s
    .records()
    .slice(from)
    .filter((r) => (r.ev === "call" || r.ev === "reply") && r.method === "chat.messages.transform");
}

async function restartSidecar() {
  const victim = h.sidecar.pid;
  process.kill(victim, "SIGKILL");
  await waitFor(() => !alive(victim), 3000);
  await waitFor(() => h.sidecar.state === "ready" && h.sidecar.pid !== victim, 10_000);
}

test("a restarted sidecar does not hold the base: -32005, and the shim resends in full within the same call", async () => {
  const history = [message("r1", "user", [text("rp1", "hello")])];
  await h.hooks["experimental.chat.messages.transform"]({}, { messages: clone(history) });
  history.push(message("r2", "assistant", [task("rp2", "rc1", "completed")]));
  let n = s.records().length;
  await h.hooks["experimental.chat.messages.transform"]({}, { messages: clone(history) });
  assert.ok(transformCalls(n)[0].params.sync.base, "the second call went incrementally");

  await restartSidecar();
  history.push(message("r3", "user", [text("rp3", "again")]));
  n = s.records().length;
  const out = { messages: clone(history) };
  await h.hooks["experimental.chat.messages.transform"]({}, out);
  const calls = transformCalls(n);
  assert.deepEqual(
    calls.map((r) => [r.ev, r.ev === "call" ? (r.params.sync.base ? "incremental" : "full") : r.ok ? "ok" : r.code]),
    [["call", "incremental"], ["reply", CODE_UNKNOWN_BASE], ["call", "full"], ["reply", "ok"]],
  );
  assert.equal(calls[2].params.output.messages.length, 3);
  assert.ok(calls[3].result.base, "the new sidecar acknowledged a base");
  assert.match(out.messages[2].parts.at(-1).text ?? "", /internal_reminder/, "the patch landed");
  // And from there on, incremental again.
  history.push(message("r4", "assistant", [text("rp4", "done")]));
  n = s.records().length;
  await h.hooks["experimental.chat.messages.transform"]({}, { messages: clone(history) });
  assert.deepEqual(transformCalls(n)[0].params.sync.messages, [{ keep: 0, count: 3 }, { message: projectMessages({ messages: [history[3]] }).messages[0] }]);
});

// mulberry32: a seeded PRNG, so a failure replays.
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ERRORS = [
  "Unknown agent type: finder is not a valid agent type",
  'Expected a string starting with "ses", got "exp-1"',
  "something else broke",
];

test("property: random history edits, and two restarts, give exactly the full form's output", async () => {
  const rnd = prng(14);
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  const session = "ses_prop000000000000000001";
  let n = 0;
  const id = (p) => `${p}_${String(++n).padStart(5, "0")}`;
  const pending = [];
  const part = () => {
    const r = rnd();
    if (r < 0.3) return text(id("prt"), `words ${n}`);
    if (r < 0.6) {
      const p = task(id("prt"), id("call"), "completed");
      if (rnd() < 0.3) {
        if (pending.length) p.callID = pending.shift();
        p.state = { status: "error", error: pick(ERRORS), input: {} };
      }
      return p;
    }
    if (r < 0.8) return { ...task(id("prt"), id("call"), "running"), tool: "read" };
    return { id: id("prt"), type: "step-start" };
  };
  const msg = (role) => ({
    info: { id: id("msg"), role, sessionID: session, time: { created: n }, ...(role === "user" ? { agent: pick(["orchestrator", "orchestrator", "explorer"]) } : {}) },
    parts: role === "user" ? [text(id("prt"), `please ${n}`)] : Array.from({ length: 1 + Math.floor(rnd() * 3) }, part),
  });
  let history = [];
  const counts = { incremental: 0, full: 0, unknownBase: 0, reapplied: 0 };
  for (let step = 0; step < 300; step++) {
    const r = rnd();
    if (step === 100 || step === 200) {
      // Both lose what they held in memory; only the shim's bases are at stake.
      await restartSidecar();
      ref.stop();
      ref = await fullClient(s.records().findLast((r) => r.ev === "call" && r.method === "initialize").params);
    } else if (r < 0.1) {
      // A task call: both sidecars see it; some stay pending and fail later.
      const callID = id("call");
      const input = { tool: "task", sessionID: session, callID };
      const args = { description: `work ${callID}`, prompt: "p", subagent_type: pick(["explorer", "oracle"]) };
      await h.hooks["tool.execute.before"](input, { args: { ...args } });
      await ref.call("tool.execute.before", { input, output: { args: { ...args } } });
      if (rnd() < 0.3) pending.push(callID);
      else {
        const out = { title: "t", metadata: {}, output: `task_id: ses_child_${n} (for resuming)\n\n<task_result>\nok\n</task_result>` };
        await h.hooks["tool.execute.after"](input, clone(out));
        await ref.call("tool.execute.after", { input, output: out });
      }
    } else {
      history = clone(history);
      const e = rnd();
      if (e < 0.2 || history.length === 0) history.push(msg("user"));
      else if (e < 0.4) history.push(msg("assistant"));
      else if (e < 0.7) {
        // A part changes in a way the patch shows: a status, an error text
        // (guidance or none), a text that gains or loses the skip marker.
        const parts = history.flatMap((m) => m.parts).filter((p) => p.state || p.type === "text");
        const p = parts.length ? pick(parts) : undefined;
        if (p?.state) {
          if (!(p.state.status === "error" && rnd() < 0.5)) p.state = { ...p.state, status: pick(["running", "completed", "error"]) };
          if (p.state.status === "error") p.state.error = pick(ERRORS);
          else delete p.state.error;
        } else if (p) p.text = pick([`edited ${n++}`, "<!-- SLIM_INTERNAL_INITIATOR --> go", "plain"]);
      } else if (e < 0.77) {
        const a = Math.floor(rnd() * history.length);
        const b = a + 1 + Math.floor(rnd() * (history.length - a));
        history.splice(a, b - a, { info: { id: id("msg"), role: "assistant", sessionID: session, summary: true }, parts: [text(id("prt"), "summary")] });
      } else if (e < 0.84) history = history.slice(0, Math.floor(rnd() * history.length));
      else if (e < 0.89) {
        const i = Math.floor(rnd() * history.length);
        const j = Math.floor(rnd() * history.length);
        [history[i], history[j]] = [history[j], history[i]];
      } else if (e < 0.94) {
        const m = pick(history);
        m.info = { ...m.info, role: "user", agent: pick(["orchestrator", "explorer", undefined]) };
      } else history.push(msg(pick(["user", "assistant"])));
    }
    // OpenCode hands each call a fresh copy of the history.
    const viaShim = { messages: clone(history) };
    const viaFull = { messages: clone(history) };
    const from = s.records().length;
    await h.hooks["experimental.chat.messages.transform"]({}, viaShim);
    await ref.transform(viaFull);
    assert.deepEqual(viaShim, viaFull, `step ${step}`);
    for (const c of transformCalls(from)) {
      if (c.ev === "call") counts[c.params.sync?.base ? "incremental" : "full"]++;
      else assert.ok(c.ok || c.code === CODE_UNKNOWN_BASE, JSON.stringify(c));
      if (c.ev === "reply" && c.code === CODE_UNKNOWN_BASE) counts.unknownBase++;
      if (c.ev === "reply" && c.result?.reapply?.length) counts.reapplied++;
    }
  }
  assert.ok(counts.incremental > 150, JSON.stringify(counts));
  assert.ok(counts.unknownBase > 0, JSON.stringify(counts));
  assert.ok(counts.reapplied > 100, JSON.stringify(counts));
});
