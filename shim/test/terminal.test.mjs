// The problems the TUI shows as toasts reach the terminal under `opencode
// run` (stderr), once each, and never in the TUI (it owns the terminal):
// log.ts's runTerminal and Logger, through createHookwire.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createHookwire } from "../dist/plugin.js";
import { Logger, runTerminal } from "../dist/log.js";
import { fakeClient, realSidecar, scratch, waitFor } from "./helpers.mjs";

test("runTerminal: stderr under `opencode run` only", () => {
  const rows = [
    ["opencode run", ["bun", "/$bunfs/root/src/index.js", "run", "hello"], true],
    ["the TUI", ["bun", "/$bunfs/root/src/index.js"], false],
    ["the TUI in a directory", ["bun", "/$bunfs/root/src/index.js", "/work/proj"], false],
    ["session list", ["bun", "/$bunfs/root/src/index.js", "session", "list"], false],
    ["export", ["bun", "/$bunfs/root/src/index.js", "export", "ses_1"], false],
    ["serve", ["bun", "/$bunfs/root/src/index.js", "serve"], false],
    ["opencode run --interactive (it draws a footer)", ["bun", "/$bunfs/root/src/index.js", "run", "--interactive", "hi"], false],
    ["opencode run -i", ["bun", "/$bunfs/root/src/index.js", "run", "-i"], false],
    ["opencode run --format json", ["bun", "/$bunfs/root/src/index.js", "run", "--format", "json", "hi"], true],
    ["a message after -- that says -i", ["bun", "/$bunfs/root/src/index.js", "run", "--", "-i"], true],
  ];
  for (const [name, argv, want] of rows) assert.equal(typeof runTerminal(argv) === "function", want, name);
});

/** createHookwire's user-facing lines: toasts, and what the terminal got. */
function start(options, env, terminal) {
  const s = scratch();
  const { client, toasts } = fakeClient();
  const lines = [];
  const h = createHookwire({ client }, options, { ...env, HOME: s.dir }, { terminal: terminal === null ? null : (l) => lines.push(l) });
  return { h, toasts, lines, s };
}

test("opencode run: each problem the TUI toasts is written to the terminal too, once", async (t) => {
  const rows = [
    // The sidecar judges the options: a real one answers initialize with the warning.
    ["a typo in the plugin options", { binary: realSidecar(), state: false, cacheStabel: false }, {}, /config warnings: .*cacheStabel.*cacheStable/],
    ["HOOKWIRE_OPTIONS not JSON", undefined, { HOOKWIRE_BIN: "/nonexistent/hookwire-terminal-1", HOOKWIRE_OPTIONS: "{cacheStable:false}" }, /HOOKWIRE_OPTIONS is not JSON/],
    ["the binary not found", { binary: "/nonexistent/hookwire-terminal-2" }, {}, /sidecar binary not found via the plugin option "binary"/],
  ];
  for (const [name, options, env, want] of rows) {
    await t.test(name, async () => {
      const { h, toasts, lines, s } = start(options, env);
      try {
        await waitFor(() => lines.some((l) => want.test(l)), 5000).catch(() => assert.fail(`${name}: ${JSON.stringify(lines)}`));
        assert.ok(toasts.some((x) => want.test(x.message)), "the TUI's toast is still asked for");
        for (const l of lines) assert.match(l, /^hookwire/, "each line says it is hookwire's");
        assert.equal(new Set(lines).size, lines.length, "no line twice");
        // A second instance in the same process (OpenCode starts one per directory) adds nothing.
        const again = start(options, env);
        if (again.h.sidecar) await again.h.sidecar.request("status", null, 3000);
        assert.deepEqual(again.lines.filter((l) => want.test(l)), [], "once per process");
        await again.h.dispose();
        again.s.cleanup();
      } finally {
        await h.dispose();
        s.cleanup();
      }
    });
  }
});

test("the TUI: nothing is written to the terminal, the toast is all", async () => {
  const { h, toasts, lines, s } = start({ binary: "/nonexistent/hookwire-terminal-tui" }, {}, null);
  try {
    assert.deepEqual(lines, []);
    assert.ok(toasts.some((x) => /hookwire-terminal-tui/.test(x.message)));
  } finally {
    await h.dispose();
    s.cleanup();
  }
});

test("Logger: notice writes each time, say writes without a toast, a throwing writer reaches no one", () => {
  const { client, toasts } = fakeClient();
  const lines = [];
  const log = new Logger(client, "hookwire", (l) => lines.push(l));
  log.notice("info", "hookwire: switched A");
  log.notice("info", "hookwire: switched A");
  log.say("info", "hookwire: finished on B");
  assert.deepEqual(lines, ["hookwire: switched A", "hookwire: switched A", "hookwire: finished on B"]);
  assert.equal(toasts.length, 2, "say shows no toast");
  const broken = new Logger(client, "hookwire", () => {
    throw new Error("EPIPE");
  });
  assert.doesNotThrow(() => broken.alert("k-broken", "warn", "hookwire: x"));
  assert.equal(new Logger(client).toTerminal, false);
});
