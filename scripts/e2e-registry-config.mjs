#!/usr/bin/env node
// Writes the pre-seeded OpenCode config directory for the registry test
// (scripts/e2e-registry.sh): the fake provider, OpenCode's stock agents, and
// the plugin by its npm name alone, `"plugin": ["hookwire-opencode"]`: no
// options, no file:// path (scripts/lib/opencode-config.mjs).
//
//   node e2e-registry-config.mjs --dir DIR --port PORT --version V [--no-plugin]
//
// --tui: the plugin with options that have a typo, and tui.json naming it.
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
  writeConfigDir(fakeConfig({ agents: false, plugin: [["hookwire-opencode", { cacheStabel: true }]] }));
  writeFileSync(join(arg("dir"), "tui.json"), JSON.stringify({ $schema: "https://opencode.ai/tui.json", plugin: ["hookwire-opencode"] }, null, 2) + "\n");
} else {
  const plugin = process.argv.includes("--no-plugin") ? undefined : ["hookwire-opencode"];
  writeConfigDir(fakeConfig({ agents: false, plugin }));
}
