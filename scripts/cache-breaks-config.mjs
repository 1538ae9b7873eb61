#!/usr/bin/env node
// Writes the pre-seeded OpenCode config directory for one run of the
// cache-break measurement (scripts/cache-breaks.sh): the fake provider, the
// orchestrator + explorer + oracle agents (as in the end-to-end test), and,
// unless --mode baseline, the hookwire shim as a file:// plugin with
// cacheStable false (--mode off) or true (--mode stable), always
// stated so the measurement does not move with the default (true),, and its own default
// state file unless --state FILE is given. Plus the
// package.json / package-lock.json / node_modules that stop OpenCode from
// running its own npm install there (scripts/lib/opencode-config.mjs, see
// docs/OPENCODE.md).
//
//   node cache-breaks-config.mjs --dir DIR --port PORT --version V --mode M --shim INDEX.js
//     [--state FILE] [--timeout-ms MS] [--transform-timeout-ms MS]

import { arg, fakeConfig, shimPlugin, withDeadlines, writeConfigDir } from "./lib/opencode-config.mjs";

const mode = arg("mode");
const state = arg("state");
if (!["baseline", "off", "stable"].includes(mode)) {
  console.error(`cache-breaks-config: --mode baseline|off|stable, got ${mode}`);
  process.exit(2);
}

let plugin;
if (mode !== "baseline") {
  // The store must outlive each `opencode run` (one process per user turn):
  // aliases and frozen blocks come back from the state file. The shim's
  // default per-project state file (under the run's own XDG_STATE_HOME) is
  // what users get, so it is what is measured; --state FILE overrides it.
  const shimOptions = { cacheStable: mode === "stable" };
  if (state) shimOptions.state = state;
  plugin = [shimPlugin(withDeadlines(shimOptions))];
}

writeConfigDir(fakeConfig({ top: { snapshot: false }, plugin }));
