#!/usr/bin/env node
// Writes the pre-seeded OpenCode config directory for the registry test
// (scripts/e2e-registry.sh): the fake provider, OpenCode's stock agents, and
// the plugin by its npm name alone, `"plugin": ["hookwire-opencode"]`: no
// options, no file:// path (scripts/lib/opencode-config.mjs).
//
//   node e2e-registry-config.mjs --dir DIR --port PORT --version V [--no-plugin]
//
// --tui: the plugin with options that have a typo and a fallback for the
// explorer agent (on a model that answers 429), priced models, and tui.json
// naming the plugin.
// --no-plugin: no plugin list at all (`opencode plugin hookwire-opencode`
// adds it). --seed DIR instead: only the package.json / package-lock.json /
// node_modules that stop OpenCode's own npm install in a config directory
// (a project's .opencode/, which `opencode plugin` creates).

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { arg, fakeConfig, writeConfigDir } from "./lib/opencode-config.mjs";

const seed = arg("seed");
if (seed) {
  // writeConfigDir's npm files, around the opencode.json already there.
  const config = readFileSync(join(seed, "opencode.json"), "utf8");
  process.argv.push("--dir", seed);
  writeConfigDir({});
  writeFileSync(join(seed, "opencode.json"), config);
  mkdirSync(join(seed, "node_modules"), { recursive: true });
} else if (process.argv.includes("--tui")) {
  // The TUI test: the plugin with an option misspelt (its did-you-mean must
  // reach the screen), and its TUI part in tui.json, as `opencode plugin`
  // writes it.
  // T10: an explorer agent on fake-model-3, which always answers 429
  // (scripts/fakellm/scenario.mjs), with a fallback in agentModels, as in
  // the runtime-fallback test (scripts/e2e-fallback-config.mjs). T11: every
  // model has a price, so OpenCode's cost of a message is not 0 (the fake
  // LLM reports 10 prompt and 5 completion tokens a request: $0.02).
  const config = fakeConfig({
    agents: false,
    plugin: [["hookwire-opencode", { cacheStabel: true, agentModels: { explorer: { fallbackModels: ["fake/fake-model-2"] } } }]],
  });
  const models = config.provider.fake.models;
  for (const id of ["fake-model-2", "fake-model-3"]) models[id] = { name: id, tool_call: true, limit: { context: 128000, output: 4096 } };
  for (const m of Object.values(models)) m.cost = { input: 1000, output: 2000 };
  config.agent = {
    explorer: { mode: "subagent", model: "fake/fake-model-3", description: "Explores the repository", prompt: "You explore the repository. AGENT_MARKER:explorer" },
  };
  writeConfigDir(config);
  writeFileSync(join(arg("dir"), "tui.json"), JSON.stringify({ $schema: "https://opencode.ai/tui.json", plugin: ["hookwire-opencode"] }, null, 2) + "\n");
} else {
  const plugin = process.argv.includes("--no-plugin") ? undefined : ["hookwire-opencode"];
  writeConfigDir(fakeConfig({ agents: false, plugin }));
}
