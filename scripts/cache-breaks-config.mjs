#!/usr/bin/env node
// Writes the pre-seeded OpenCode config directory for one run of the
// cache-break measurement (scripts/cache-breaks.sh): the fake provider, the
// orchestrator + explorer + oracle agents (as in the end-to-end test), and,
// unless --mode baseline, the hookwire shim as a file:// plugin with
// cacheStable off (--mode default) or on (--mode stable), and its own default
// state file unless --state FILE is given. Plus the
// package.json / package-lock.json / node_modules that stop OpenCode from
// running its own npm install there (see shared/OPENCODE.md).

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const dir = arg("dir");
const port = arg("port");
const version = arg("version");
const mode = arg("mode");
const shim = arg("shim");
const state = arg("state");
const timeoutMs = Number(arg("timeout-ms") || 0);
const transformTimeoutMs = Number(arg("transform-timeout-ms") || 0);
if (!["baseline", "default", "stable"].includes(mode)) {
  console.error(`cache-breaks-config: --mode baseline|default|stable, got ${mode}`);
  process.exit(2);
}

const config = {
  $schema: "https://opencode.ai/config.json",
  autoupdate: false,
  share: "disabled",
  snapshot: false,
  model: "fake/fake-model",
  small_model: "fake/fake-model",
  provider: {
    fake: {
      npm: "@ai-sdk/openai-compatible",
      name: "Fake",
      options: { baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "x" },
      models: {
        "fake-model": { name: "Fake Model", tool_call: true, limit: { context: 128000, output: 4096 } },
      },
    },
  },
  agent: {
    orchestrator: {
      mode: "primary",
      description: "Delegates work to subagents",
      prompt: "You are the orchestrator. AGENT_MARKER:orchestrator",
      permission: { task: "allow" },
    },
    explorer: {
      mode: "subagent",
      description: "Explores the repository",
      prompt: "You explore the repository. AGENT_MARKER:explorer",
    },
    oracle: {
      mode: "subagent",
      description: "Answers design questions",
      prompt: "You answer design questions. AGENT_MARKER:oracle",
    },
  },
};

if (mode !== "baseline") {
  // The store must outlive each `opencode run` (one process per user turn):
  // aliases and frozen blocks come back from the state file. The shim's
  // default per-project state file (under the run's own XDG_STATE_HOME) is
  // what users get, so it is what is measured; --state FILE overrides it.
  const shimOptions = { cacheStable: mode === "stable" };
  if (state) shimOptions.state = state;
  if (timeoutMs > 0) shimOptions.timeoutMs = timeoutMs;
  if (transformTimeoutMs > 0) shimOptions.transformTimeoutMs = transformTimeoutMs;
  config.plugin = [[pathToFileURL(shim).href, shimOptions]];
}

mkdirSync(join(dir, "node_modules"), { recursive: true });
writeFileSync(join(dir, "opencode.json"), JSON.stringify(config, null, 2));
const deps = { "@opencode-ai/plugin": version };
writeFileSync(join(dir, "package.json"), JSON.stringify({ dependencies: deps }, null, 2));
writeFileSync(
  join(dir, "package-lock.json"),
  JSON.stringify(
    {
      name: "opencode",
      lockfileVersion: 3,
      requires: true,
      packages: {
        "": { dependencies: deps },
        "node_modules/@opencode-ai/plugin": { version },
      },
    },
    null,
    2,
  ),
);
