// The `./server` entry's setup on a context it cannot bridge, and every
// failure inside setup (issue 28): OpenCode 1.17+ call server() and then
// setup() with a registration-only context (docs/OPENCODE.md, "OpenCode
// 1.17+ calls setup too"); setup must start nothing, throw nothing, and
// leave the server() instance the only sidecar.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { realSidecar, scratch, shimDir, waitFor, sidecarPids } from "./helpers.mjs";

const entry = (await import(pathToFileURL(join(shimDir, "dist", "server.js")).href)).default;

/** The context OpenCode 1.18.33 gave setup (keys measured with a probe module). */
function registrationOnly(options) {
  const ctx = { options };
  for (const k of ["agent", "aisdk", "catalog", "command", "integration", "plugin", "reference", "skill"]) ctx[k] = { register: async () => ({ dispose: async () => {} }) };
  return ctx;
}

const sidecars = sidecarPids;

const optionsOf = (s) => ({ binary: realSidecar(), state: false, trace: s.trace, logFile: s.log, timeoutMs: 2000 });

test("server() then setup() with the registration-only context: setup resolves, starts no process, and after both are disposed no sidecar remains", async () => {
  const s = scratch();
  const binary = realSidecar();
  try {
    const hooks = await entry.server({ directory: s.dir, worktree: s.dir }, optionsOf(s));
    await waitFor(() => s.records().find((r) => r.ev === "reply" && r.method === "initialize"), 10000);
    assert.equal(sidecars(binary).length, 1, "server() runs one sidecar");

    const ctx = registrationOnly(optionsOf(s));
    assert.deepEqual(Object.keys(ctx).sort(), ["agent", "aisdk", "catalog", "command", "integration", "options", "plugin", "reference", "skill"]);
    const cleanup = await entry.setup(ctx);
    assert.equal(typeof cleanup, "function");
    assert.equal(s.records().filter((r) => r.ev === "spawn").length, 1, "setup spawned nothing");
    assert.equal(sidecars(binary).length, 1, "still the one sidecar of server()");
    const skipped = s.records().filter((r) => r.ev === "setup-skipped");
    assert.equal(skipped.length, 1, "one debug line");
    assert.match(skipped[0].why, /session\.hook, tool\.hook, event\.subscribe/);

    // server()'s instance goes on serving.
    const out = { system: ["You are build."] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, out);
    assert.ok(s.records().some((r) => r.ev === "reply" && r.method === "chat.system.transform"));

    await cleanup();
    await hooks.dispose();
    await waitFor(() => sidecars(binary).length === 0, 5000);
  } finally {
    s.cleanup();
  }
});

/** A full context whose parts can be broken one at a time. */
function brokenContext(options, broken) {
  const registered = [];
  const disposed = [];
  const reg = (kind) => async (name) => {
    if (broken === `refuse:${kind}`) throw new Error(`${kind}.hook refused`);
    registered.push(`${kind}:${name}`);
    return {
      dispose: broken === "dispose" ? () => (disposed.push(`${kind}:${name}`), (() => { throw new Error("dispose threw"); })()) : async () => disposed.push(`${kind}:${name}`),
    };
  };
  return {
    registered,
    disposed,
    ctx: {
      options,
      app: { name: "opencode", version: "2.0.0" },
      session: { hook: reg("session") },
      tool: { hook: reg("tool") },
      event: {
        subscribe: () =>
          broken === "stream"
            ? {}
            : {
                [Symbol.asyncIterator]: () => {
                  let end;
                  return {
                    next: () => new Promise((r) => (end = r)),
                    return: async () => (end?.({ done: true, value: undefined }), { done: true, value: undefined }),
                  };
                },
              },
      },
    },
  };
}

for (const [broken, what] of [
  ["refuse:tool", "a refused registration"],
  ["stream", "an event stream that is not iterable"],
  ["dispose", "a cleanup whose registrations throw"],
]) {
  test(`setup fails open on ${what} and stops the sidecar it started`, async () => {
    const s = scratch();
    const binary = realSidecar();
    try {
      const { ctx, registered, disposed } = brokenContext(optionsOf(s), broken);
      const cleanup = await entry.setup(ctx);
      assert.equal(typeof cleanup, "function", "setup resolved");
      if (broken !== "dispose") {
        // What a failed setup registered is disposed at once (the test
        // recorded registrations and read none of them).
        assert.ok(registered.length > 0, "setup registered something before it failed");
        assert.deepEqual([...disposed].sort(), [...registered].sort(), "no hook left registered");
      }
      if (broken === "dispose") {
        await waitFor(() => s.records().find((r) => r.ev === "spawn"), 5000);
        assert.equal(sidecars(binary).length, 1, "a working setup runs its sidecar");
      }
      await cleanup();
      assert.deepEqual([...disposed].sort(), [...registered].sort(), "after cleanup every registration was disposed");
      assert.equal(s.records().filter((r) => r.ev === "spawn").length, 1, "one sidecar was started");
      await waitFor(() => sidecars(binary).length === 0, 5000);
    } finally {
      s.cleanup();
    }
  });
}
