#!/usr/bin/env node
// Writes the pre-seeded OpenCode config directory for the model-fallback
// end-to-end test (scripts/e2e-models.sh), on scripts/lib/opencode-config.mjs:
//
//   node e2e-models-config.mjs --dir DIR --port PORT --version V --shim INDEX.js
//     [--no-plugin] [--timeout-ms MS] [--transform-timeout-ms MS]
//
// Two providers: `fake` (the fake LLM, connected, models fake-model and
// fake-model-2) and `anthropic`, a provider of OpenCode's own catalogue that
// is not connected here (no ANTHROPIC_API_KEY, no auth). explorer is
// configured on anthropic/claude-sonnet-4-6; oracle on fake/fake-model.
// The shim's agentModels give explorer a fallback chain to fake-model-2 and
// oracle the same chain (never needed: its model is available).
// --no-plugin: OpenCode alone, the baseline.

import { fakeConfig, shimPlugin, withDeadlines, writeConfigDir } from "./lib/opencode-config.mjs";

export const AGENT_MODELS = {
  explorer: {
    fallbackChain: [
      { providers: ["anthropic"], model: "claude-sonnet-4-6" },
      { providers: ["fake"], model: "fake-model-2" },
    ],
  },
  oracle: { fallbackChain: [{ providers: ["fake"], model: "fake-model-2" }] },
};

const plugin = process.argv.includes("--no-plugin") ? undefined : [shimPlugin(withDeadlines({ agentModels: AGENT_MODELS }))];
const config = fakeConfig({ plugin });
config.provider.fake.models["fake-model-2"] = { name: "Fake Model 2", tool_call: true, limit: { context: 128000, output: 4096 } };
config.agent.explorer.model = "anthropic/claude-sonnet-4-6";
config.agent.oracle.model = "fake/fake-model";
writeConfigDir(config);
