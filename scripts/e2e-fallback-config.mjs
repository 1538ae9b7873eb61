#!/usr/bin/env node
// Writes the pre-seeded OpenCode config directory for the runtime-fallback
// end-to-end test (scripts/e2e-fallback.sh), on scripts/lib/opencode-config.mjs:
//
//   node e2e-fallback-config.mjs --dir DIR --port PORT --version V --shim INDEX.js
//     [--no-plugin] [--user-fallback] [--timeout-ms MS] [--transform-timeout-ms MS]
//
// One provider, `fake` (the fake LLM), with fake-model (the orchestrator's),
// fake-model-2 and fake-model-3, which always answers 429. explorer and
// oracle are configured on fake/fake-model-3. The shim's agentModels give
// explorer a fallback, fake/fake-model-2; oracle has no entry, so its
// fallback is its parent session's model, fake/fake-model.
// --no-plugin: OpenCode alone, the baseline. --user-fallback: the
// orchestrator (the user's own session) gets an agentModels entry too,
// falling back to fake/fake-model-2.

import { fakeConfig, shimPlugin, withDeadlines, writeConfigDir } from "./lib/opencode-config.mjs";

export const AGENT_MODELS = { explorer: { fallbackModels: ["fake/fake-model-2"] } };
if (process.argv.includes("--user-fallback")) AGENT_MODELS.orchestrator = { fallbackModels: ["fake/fake-model-2"] };

const plugin = process.argv.includes("--no-plugin") ? undefined : [shimPlugin(withDeadlines({ agentModels: AGENT_MODELS }))];
const config = fakeConfig({ plugin });
for (const id of ["fake-model-2", "fake-model-3"]) {
  config.provider.fake.models[id] = { name: id, tool_call: true, limit: { context: 128000, output: 4096 } };
}
config.agent.explorer.model = "fake/fake-model-3";
config.agent.oracle.model = "fake/fake-model-3";
writeConfigDir(config);
