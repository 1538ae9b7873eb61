// Shared by the config generators of the scripts that drive real OpenCode
// against the fake LLM (scripts/e2e-opencode-config.mjs,
// scripts/cache-breaks-config.mjs): their command line, the opencode.json
// they have in common (the fake provider, the orchestrator + explorer +
// oracle agents), and the pre-seeded config directory: opencode.json plus
// the package.json / package-lock.json / node_modules that stop OpenCode from
// running its own npm install there (see docs/OPENCODE.md).

import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** The value after --NAME on the command line. */
export const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};

/** Adds the shim deadlines of --timeout-ms / --transform-timeout-ms (when > 0) to shim options. */
export function withDeadlines(shimOptions) {
  const timeoutMs = Number(arg("timeout-ms") || 0);
  const transformTimeoutMs = Number(arg("transform-timeout-ms") || 0);
  if (timeoutMs > 0) shimOptions.timeoutMs = timeoutMs;
  if (transformTimeoutMs > 0) shimOptions.transformTimeoutMs = transformTimeoutMs;
  return shimOptions;
}

/**
 * Whether the OpenCode of --version takes `[name, options]` entries in the
 * plugin list. 1.3.2 and older accept only names (their config schema says
 * `plugin: string[]`, a tuple fails the config) and pass no options; of the
 * versions the registry serves, 1.14.34 is the next, and it takes them.
 */
export function takesPluginOptions(version = arg("version")) {
  const [major, minor] = String(version ?? "").split(".").map(Number);
  return major > 1 || (major === 1 && minor >= 14);
}

/**
 * The shim of --shim as a file:// plugin entry with these options. On an
 * OpenCode that takes no plugin options the entry is the URL alone and the
 * options go to --dir's hookwire-options.json, which scripts/lib/opencode.sh
 * exports as HOOKWIRE_OPTIONS (the shim reads it when OpenCode passes none).
 */
export function shimPlugin(shimOptions) {
  const url = pathToFileURL(arg("shim")).href;
  if (takesPluginOptions()) return [url, shimOptions];
  envOptions = shimOptions;
  return url;
}

/** The options of the bare shim entry shimPlugin last made, for hookwire-options.json. */
let envOptions;

/**
 * opencode.json for the fake LLM on --port: the fake provider and model, the
 * orchestrator (AGENT_MARKER:orchestrator in its prompt, allowed to delegate)
 * and its subagents explorer and oracle. `top` holds settings placed after
 * autoupdate and share; `plugin`, when given, the plugin list. `agents:
 * false` leaves the agents out: OpenCode's stock ones (build, plan, explore,
 * general) are all there is.
 */
export function fakeConfig({ top = {}, plugin, agents = true } = {}) {
  const config = {
    $schema: "https://opencode.ai/config.json",
    autoupdate: false,
    share: "disabled",
    ...top,
    model: "fake/fake-model",
    small_model: "fake/fake-model",
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        name: "Fake",
        options: { baseURL: `http://127.0.0.1:${arg("port")}/v1`, apiKey: "x" },
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
  if (!agents) delete config.agent;
  if (plugin) config.plugin = plugin;
  return config;
}

/** Writes the config directory --dir: opencode.json, and @opencode-ai/plugin --version as if installed. */
export function writeConfigDir(config) {
  const dir = arg("dir");
  const version = arg("version");
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  writeFileSync(join(dir, "opencode.json"), JSON.stringify(config, null, 2));
  // The options of a bare shim entry (shimPlugin), for HOOKWIRE_OPTIONS.
  const optionsFile = join(dir, "hookwire-options.json");
  rmSync(optionsFile, { force: true });
  if (envOptions) writeFileSync(optionsFile, JSON.stringify(envOptions));
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
}
