#!/usr/bin/env node
// Writes the pre-seeded OpenCode config directory for the end-to-end test:
// opencode.json (fake provider, the hookwire shim as a file:// plugin with
// options) and the package.json / package-lock.json / node_modules that stop
// OpenCode from running its own npm install there
// (scripts/lib/opencode-config.mjs, see docs/OPENCODE.md).
//
//   node e2e-opencode-config.mjs --dir DIR --port PORT --version V --shim INDEX.js
//     [--stock] [--timeout-ms MS] [--transform-timeout-ms MS]
//
// Default: the orchestrator + explorer + oracle agents, and the shim with
// cacheStable false, since that run checks the Resumable Sessions block in
// the system prompt and the reminder on the latest user message (PROTOCOL.md
// 4.2, 4.3). --stock: no agent definitions at all (OpenCode's own build,
// plan, explore, general) and the shim with its defaults (cache-stable,
// 4.4). Neither sets a state option: the shim's default per-project state
// file carries the aliases from one OpenCode process to the next.

import { fakeConfig, shimPlugin, withDeadlines, writeConfigDir } from "./lib/opencode-config.mjs";

const stock = process.argv.includes("--stock");
const shimOptions = stock ? {} : { cacheStable: false };
writeConfigDir(fakeConfig({ agents: !stock, plugin: [shimPlugin(withDeadlines(shimOptions))] }));
