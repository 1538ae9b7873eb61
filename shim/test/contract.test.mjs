// The shim against the protocol contract (contract/contract.json, generated
// into src/contract.gen.ts): the hooks it registers, what it sends each
// hook's call as, the fields it projects, the package names it looks for,
// and the fakes the other tests run against.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import * as contract from "../dist/contract.gen.js";
import { createHookwire } from "../dist/plugin.js";
import { projectMessage } from "../dist/projection.js";
import { platformPackage } from "../dist/binary.js";
import { FAKE_CAPABILITIES, fakeClient, fakeSpawner, repoDir, waitFor } from "./helpers.mjs";

const instances = [];
after(async () => {
  for (const h of instances) await h.dispose();
});

const spec = JSON.parse(readFileSync(join(repoDir, "contract", "contract.json"), "utf8"));

test("the generated module holds the contract file's methods, hooks, codes, fields and packages", () => {
  assert.deepEqual(contract.METHODS.map((m) => [m.name, m.kind, m.role]), spec.methods.map((m) => [m.name, m.kind, m.role]));
  assert.deepEqual(
    contract.HOOKS.map((h) => h.method),
    spec.methods.filter((m) => m.role === "hook").map((m) => m.name),
  );
  assert.equal(contract.CODE_UNKNOWN_BASE, spec.errors.find((e) => e.name === "UnknownBase").code);
  assert.deepEqual(contract.PART_READS.map((f) => f.path), spec.transformReads.part.map((f) => f.path));
  assert.equal(contract.PLUGIN_PACKAGE, spec.packages.plugin);
});

test("the shim registers every hook of the contract under its OpenCode name, and forwards each to its method", async () => {
  const fc = fakeClient();
  const spawner = fakeSpawner();
  const h = createHookwire({ client: fc.client }, { binary: "/fake/hookwire", logFile: null, subagents: [], primaryAgents: [] }, { ...process.env }, {
    spawn: spawner.spawn,
  });
  instances.push(h);
  assert.deepEqual(Object.keys(h.hooks).sort(), [...contract.HOOKS.map((x) => x.opencodeHook), "config", "dispose"].sort());
  await waitFor(() => h.sidecar.state === "ready");

  for (const hook of contract.HOOKS) {
    const input =
      hook.method === "event"
        ? { event: { type: contract.EVENTS[0], properties: { info: { id: "ses_contract" } } } }
        : { sessionID: "ses_contract", tool: "task", callID: "c1", agent: "build" };
    const output = hook.transform ? (hook.method === "chat.messages.transform" ? { messages: [] } : { system: [] }) : { args: {}, message: {}, parts: [] };
    await h.hooks[hook.opencodeHook](input, output);
  }
  const child = spawner.children[0];
  await waitFor(() => contract.HOOKS.every((x) => child.received.some((m) => m.method === x.method)));
  for (const hook of contract.HOOKS) {
    const sent = child.received.filter((m) => m.method === hook.method);
    assert.ok(sent.length >= 1, `${hook.opencodeHook} reached the sidecar as ${hook.method}`);
    assert.equal(sent.every((m) => m.id !== undefined), hook.kind === "request", `${hook.method} goes as a ${hook.kind}`);
  }
});

test("projection keeps exactly the contract's fields, whatever else a message holds", () => {
  const set = (obj, path, value) => {
    const keys = path.split(".");
    let o = obj;
    for (const k of keys.slice(0, -1)) o = o[k] ??= {};
    o[keys.at(-1)] = value;
  };
  const msg = { info: { time: { created: 1 }, model: { providerID: "p" }, summary: "s" }, parts: [{ id: "prt", state: { output: "big", input: {} }, metadata: {} }] };
  for (const f of contract.INFO_READS) set(msg.info, f.path, f.type === "boolean" ? true : `v-${f.path}`);
  for (const f of contract.PART_READS) set(msg.parts[0], f.path, f.type === "boolean" ? true : `v-${f.path}`);

  const paths = (obj, prefix = "") =>
    Object.entries(obj).flatMap(([k, v]) => (v !== null && typeof v === "object" && !Array.isArray(v) ? paths(v, `${prefix}${k}.`) : [`${prefix}${k}`]));
  const p = projectMessage(msg);
  assert.deepEqual(paths(p.info).sort(), contract.INFO_READS.map((f) => f.path).sort());
  assert.deepEqual(paths(p.parts[0]).sort(), contract.PART_READS.map((f) => f.path).sort());
  for (const f of contract.PART_READS) {
    const v = f.path.split(".").reduce((o, k) => o?.[k], p.parts[0]);
    assert.equal(typeof v, f.type, f.path);
  }
});

test("the platform package names are the contract's", () => {
  for (const p of contract.PLATFORMS) assert.equal(platformPackage(p.os, p.cpu), p.package);
  assert.equal(platformPackage("freebsd", "x64"), `${contract.PLUGIN_PACKAGE}-freebsd-x64`, "an unlisted platform is named as its package would be");
});

test("the fakes announce the contract's capabilities", async () => {
  assert.deepEqual(FAKE_CAPABILITIES, {
    hooks: spec.methods.filter((m) => m.role === "hook").map((m) => m.name),
    events: spec.events,
    methods: spec.methods.filter((m) => m.role === "method").map((m) => m.name),
  });
});

test("every name the sidecar's config takes goes to it as given, never taken for a misspelt shim option", async () => {
  const { resolveSettings } = await import("../dist/options.js");
  const fromSpec = [...new Set(spec.config.members.map((m) => m.name.split(".")[0]))];
  assert.deepEqual([...contract.CONFIG_NAMES], fromSpec);
  assert.deepEqual(contract.CONFIG_MEMBERS.map((m) => m.name), spec.config.members.map((m) => m.name));
  const options = Object.fromEntries(contract.CONFIG_NAMES.map((name, i) => [name, i]));
  const s = resolveSettings(options, {});
  assert.deepEqual(s.config, options);
  assert.deepEqual(s.warnings.filter((w) => w.includes("unknown option")), []);
});

test("the OpenCode 2 fallback path and the server part reach the sidecar through the contract's types, not past them", () => {
  // A cast to never would let a change of model.failed's params or result
  // type-check on 1.x and drift on OpenCode 2 (issue 50).
  for (const file of ["server.ts", "v2.ts", "v2fallback.ts"]) {
    const src = readFileSync(join(repoDir, "shim", "src", file), "utf8");
    assert.doesNotMatch(src, /\bas never\b/, `${file} casts past the contract's types`);
  }
  const fallback = readFileSync(join(repoDir, "shim", "src", "v2fallback.ts"), "utf8");
  assert.match(fallback, /modelFailed\?: \(params: ModelFailedParams\) => Promise<V2ModelFailedResult>/);
});
