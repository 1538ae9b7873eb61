#!/usr/bin/env node
// Writes the pre-seeded OpenCode config directory for the end-to-end test:
// opencode.json (fake provider, orchestrator + explorer + oracle, the hookwire
// shim as a file:// plugin with options) and the package.json /
// package-lock.json / node_modules that stop OpenCode from running its own
// npm install there (scripts/lib/opencode-config.mjs, see docs/OPENCODE.md).
//
//   node e2e-opencode-config.mjs --dir DIR --port PORT --version V --shim INDEX.js
//     [--timeout-ms MS] [--transform-timeout-ms MS]

import { fakeConfig, shimPlugin, withDeadlines, writeConfigDir } from "./lib/opencode-config.mjs";

// No state option: the shim keeps its default per-project state file.
writeConfigDir(fakeConfig({ plugin: [shimPlugin(withDeadlines({}))] }));
