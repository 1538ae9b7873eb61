// Plugin options: the shim's own settings, and the rest, which is the
// sidecar's config (PROTOCOL.md section 7) sent as-is with initialize.
//
// Options are forgiving, like the sidecar's config: a bad value keeps its
// default and an unknown name that looks like a misspelt shim option is
// left out, each with a warning that names the option (logged and shown by
// the plugin); everything else applies.

import { accessSync, constants, existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, isAbsolute, join, parse, resolve } from "node:path";
import { DEFAULT_HUNG_AFTER_MISSES, DEFAULT_MAX_IN_FLIGHT_BYTES, DEFAULT_MAX_REPLY_BYTES } from "./sidecar.js";
import { platformBinary } from "./binary.js";
import { CONFIG_NAMES, SHIM_OPTIONS } from "./contract.gen.js";

export type ShimSettings = {
  /** Path of the hookwire binary; null when none was found. */
  binary: string | null;
  /** Where binary came from: the option, HOOKWIRE_BIN, the installed platform package (binary.ts), PATH. */
  binarySource: "option" | "env" | "package" | "path" | "none";
  args: string[];
  timeoutMs: number;
  transformTimeoutMs: number;
  /** How long a failed subagent's run on its fallback model may take (runtime fallback, fallback.ts). */
  fallbackTimeoutMs: number;
  /** Deadline misses in a row before the sidecar is killed as hung; 0: never. */
  hungAfterMisses: number;
  /** Most bytes written to the sidecar and not yet read by it. */
  maxInFlightBytes: number;
  /** Longest reply line read from the sidecar; a longer one is discarded and its call passes through. */
  maxReplyBytes: number;
  /** Where the sidecar's stderr goes; null discards it. */
  logFile: string | null;
  trace: string | null;
  /** The state file passed as `--state` (the `state` option, a path); null otherwise. */
  state: string | null;
  /** The project directory passed as `--project`: the sidecar keeps that project's state file (PROTOCOL.md 6); null otherwise. */
  project: string | null;
  /**
   * Where state came from: "default" (the project's file, `--project`),
   * "option" (the `state` option, `--state`), "args" (a `--state` or
   * `--project` in `args`, which wins), "off" (`state: false`), "no-project"
   * (the default, but OpenCode gave no project directory: memory only).
   */
  stateSource: "default" | "option" | "args" | "off" | "no-project";
  /**
   * A redacted recording of the session, for a bug report: passed as
   * `--record FILE --record-redact`; null: none.
   */
  record: string | null;
  /** What was wrong with the options, one line each; empty when nothing was. */
  warnings: string[];
  /** Options meant for the sidecar. */
  config: Record<string, unknown>;
};

/** Option names the shim consumes; they are never sent to the sidecar (the contract's list). */
export { SHIM_OPTIONS };

/** The directories OpenCode's plugin input names (PluginInput.worktree, .directory). */
export type ProjectDirs = { worktree?: unknown; directory?: unknown };

export const DEFAULT_TIMEOUT_MS = 250;
export const DEFAULT_TRANSFORM_TIMEOUT_MS = 2000;
export const DEFAULT_FALLBACK_TIMEOUT_MS = 15 * 60 * 1000;
export { DEFAULT_HUNG_AFTER_MISSES, DEFAULT_MAX_IN_FLIGHT_BYTES, DEFAULT_MAX_REPLY_BYTES } from "./sidecar.js";

function nonEmpty(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

/** A value as a warning shows it: JSON, cut short. */
export function shown(v: unknown): string {
  let s: string;
  try {
    s = v === undefined ? "undefined" : typeof v === "function" ? "a function" : (JSON.stringify(v) ?? String(v));
  } catch {
    s = String(v);
  }
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

/**
 * Optimal string alignment distance, in code points: insertions,
 * deletions, substitutions and swaps of neighbours. The shim's one copy of
 * hookwire's did-you-mean; the Go one is config's (hookwire doctor's), and
 * config/testdata/near-shim-options.json holds the two alike. The shim
 * keeps its own because it must warn of a misspelt option (`binray`) when
 * no sidecar can start (contract/README.md).
 */
export function editDistance(x: string, y: string): number {
  const a = [...x];
  const b = [...y];
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The shim option a name is a likely misspelling of: equal but for case, or
 * within two edits (one for option names of five letters or fewer, so that
 * short words are not taken for `args` or `state`).
 */
export function nearShimOption(name: string): string | undefined {
  let best: { option: string; d: number } | undefined;
  for (const option of SHIM_OPTIONS) {
    if (option === name) return undefined;
    const d = name.toLowerCase() === option.toLowerCase() ? 0 : editDistance(name, option);
    if (d <= (option.length <= 5 ? 1 : 2) && (!best || d < best.d)) best = { option, d };
  }
  return best?.option;
}

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * HOOKWIRE_BIN as the shim runs it: a bare name looked up on PATH, a path
 * (taken from the current directory, as spawn does) when a file is there;
 * null when neither is found.
 */
export function existingBinary(name: string, pathVar: string | undefined): string | null {
  if (!isAbsolute(name) && !name.includes("/") && !name.includes("\\")) return findOnPath(name, pathVar);
  return existsSync(name) ? name : null;
}

/** Looks name up on PATH the way a shell would. */
export function findOnPath(name: string, pathVar: string | undefined): string | null {
  for (const dir of (pathVar ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
    if (process.platform === "win32" && isExecutable(candidate + ".exe")) return candidate + ".exe";
  }
  return null;
}

/** `$XDG_STATE_HOME/hookwire`, else `~/.local/state/hookwire`: where the sidecar's log goes by default. */
export function stateDir(env: NodeJS.ProcessEnv): string {
  const stateHome = nonEmpty(env.XDG_STATE_HOME) ?? join(nonEmpty(env.HOME) ?? homedir(), ".local", "state");
  return join(stateHome, "hookwire");
}

/**
 * The project directory the sidecar's `--project` names: OpenCode's worktree
 * (the git top level, the same for every subdirectory of a repository), else
 * the directory OpenCode runs in. Outside git OpenCode reports worktree "/"
 * for every directory, so a root worktree does not count. The sidecar turns
 * it into the state file's path (sessions.ProjectStatePath, the one rule).
 */
export function projectDir(project: ProjectDirs | undefined): string | undefined {
  const worktree = nonEmpty(project?.worktree);
  if (worktree && isAbsolute(worktree) && parse(resolve(worktree)).root !== resolve(worktree)) return resolve(worktree);
  const directory = nonEmpty(project?.directory);
  return directory ? resolve(directory) : undefined;
}

/** Whether the sidecar's arguments already name where its state lives. */
export function hasStateArg(args: string[]): boolean {
  return args.some((a) => /^--?(state|project)(=|$)/.test(a));
}

/** Reads the options one by one, each bad one replaced by its default and a warning. */
class OptionReader {
  readonly warnings: string[] = [];

  constructor(private readonly o: Record<string, unknown>) {}

  has(name: string): boolean {
    return this.o[name] !== undefined;
  }

  warn(line: string): void {
    this.warnings.push(line);
  }

  /** A number that passes ok, else the default with a warning saying what it must be. */
  number(name: string, fallback: number, ok: (v: number) => boolean, must: string): number {
    const v = this.o[name];
    if (v === undefined) return fallback;
    if (typeof v === "number" && ok(v)) return v;
    this.warn(`${name} must be ${must}, got ${shown(v)}; using the default ${fallback}`);
    return fallback;
  }

  /**
   * A path option: a non-empty string; null, false or "" when offAllowed
   * turn it off (returned as null); anything else warns and is ignored
   * (undefined: the default applies).
   */
  path(name: string, offAllowed: boolean, must: string, usingInstead: string): string | null | undefined {
    const v = this.o[name];
    if (v === undefined) return undefined;
    const s = nonEmpty(v);
    if (s) return s;
    if (offAllowed && (v === null || v === false || (typeof v === "string" && v.trim() === ""))) return null;
    this.warn(`${name} must be ${must}, got ${shown(v)}; ${usingInstead}`);
    return undefined;
  }

  args(): string[] {
    const v = this.o.args;
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      this.warn(`args must be a list of strings, got ${shown(v)}; using none`);
      return [];
    }
    const args: string[] = [];
    v.forEach((a, i) => {
      if (typeof a === "string") args.push(a);
      else this.warn(`args[${i}] must be a string, got ${shown(a)}; left out`);
    });
    return args;
  }
}

/**
 * The plugin options when OpenCode passed none: HOOKWIRE_OPTIONS, a JSON
 * object. OpenCode before 1.14 accepts only plugin names in opencode.json's
 * `plugin` list (no `[name, options]` entry) and passes plugins no options,
 * so this is how a user there sets them. Options OpenCode did pass (not
 * empty) win; the variable is then ignored. Bad JSON: the defaults, with a warning.
 */
export function optionsFromEnv(options: unknown, env: NodeJS.ProcessEnv): { options: unknown; warning?: string } {
  const raw = nonEmpty(env.HOOKWIRE_OPTIONS);
  const none = options === undefined || options === null || (typeof options === "object" && !Array.isArray(options) && Object.keys(options).length === 0);
  if (!none || raw === undefined) return { options };
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return { options: parsed };
    return { options: undefined, warning: `HOOKWIRE_OPTIONS must be a JSON object, got ${shown(parsed)}; using the defaults` };
  } catch {
    return { options: undefined, warning: `HOOKWIRE_OPTIONS is not JSON (${shown(raw)}); using the defaults` };
  }
}

export function resolveSettings(
  options: unknown,
  env: NodeJS.ProcessEnv,
  project?: ProjectDirs,
  packagedBinary: () => string | null = platformBinary,
): ShimSettings {
  const envOptions = optionsFromEnv(options, env);
  options = envOptions.options;
  const isObject = options !== null && typeof options === "object" && !Array.isArray(options);
  const o: Record<string, unknown> = isObject ? (options as Record<string, unknown>) : {};
  const r = new OptionReader(o);
  if (envOptions.warning) r.warn(envOptions.warning);
  if (!isObject && options !== undefined && options !== null) r.warn(`the plugin options must be an object, got ${shown(options)}; using the defaults`);

  // Not a shim option: the sidecar's config, unless it looks like a
  // misspelt shim option (the sidecar would not know the name either). A
  // name the config takes (the contract's) is the config's, however close
  // to a shim option it is.
  const config: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if ((SHIM_OPTIONS as readonly string[]).includes(k)) continue;
    if ((CONFIG_NAMES as readonly string[]).includes(k)) {
      config[k] = v;
      continue;
    }
    const near = nearShimOption(k);
    if (near) r.warn(`${k}: unknown option, ignored (did you mean "${near}"?)`);
    else config[k] = v;
  }

  let binary: string | null = null;
  let binarySource: ShimSettings["binarySource"] = "none";
  const fromOption = r.path("binary", false, "a path or a command name", "looking for hookwire via HOOKWIRE_BIN, the platform package or PATH instead");
  const fromEnv = nonEmpty(env.HOOKWIRE_BIN);
  if (fromOption) {
    binary = fromOption;
    binarySource = "option";
  } else if (fromEnv && (binary = existingBinary(fromEnv, env.PATH))) {
    binarySource = "env";
  } else if ((binary = packagedBinary())) {
    binarySource = "package";
  } else {
    binary = findOnPath("hookwire", env.PATH);
    if (binary) binarySource = "path";
  }
  // A stale HOOKWIRE_BIN (a build that was moved or deleted) must not turn
  // hookwire off while the platform package is there: the shim falls back
  // and says which variable to unset.
  if (fromEnv && !fromOption && binarySource !== "env") {
    const instead = binary ? `using ${binary} (${binarySource === "package" ? `the platform package` : "PATH"}) instead` : "no other hookwire was found either";
    r.warn(`HOOKWIRE_BIN=${fromEnv} names no file; ${instead}. Unset HOOKWIRE_BIN (or point it at a hookwire binary)`);
  }
  // A bare name in binary is looked up on PATH too.
  if (binary && binarySource === "option" && !isAbsolute(binary) && !binary.includes("/")) {
    binary = findOnPath(binary, env.PATH) ?? binary;
  }

  const args = r.args();
  const defaultLog = join(stateDir(env), "sidecar.log");
  let logFile: string | null;
  if (r.has("logFile")) {
    const v = r.path("logFile", true, "a file path, or null to discard the sidecar's log", `using the default ${defaultLog}`);
    logFile = v === undefined ? defaultLog : v;
  } else {
    const v = env.HOOKWIRE_LOG_FILE;
    logFile = v === undefined ? defaultLog : (nonEmpty(v) ?? null);
  }

  const traceOpt = r.path("trace", true, "a file path", "no trace from the option");
  const trace = traceOpt ?? nonEmpty(env.HOOKWIRE_SHIM_TRACE) ?? null;

  let state: string | null = null;
  let projectArg: string | null = null;
  let stateSource: ShimSettings["stateSource"];
  const dir = projectDir(project);
  const stateOpt = r.path("state", true, "false or a file path", "using the per-project default");
  if (hasStateArg(args)) {
    stateSource = "args";
  } else if (stateOpt === null) {
    stateSource = "off";
  } else if (stateOpt !== undefined) {
    state = resolve(dir ?? process.cwd(), stateOpt);
    stateSource = "option";
  } else if (dir) {
    projectArg = dir;
    stateSource = "default";
  } else {
    stateSource = "no-project";
  }

  // A relative path is taken from the project directory, like state's.
  const recordOpt = r.path("record", true, "a file path", "no recording from the option") ?? nonEmpty(env.HOOKWIRE_RECORD);
  const record = recordOpt ? resolve(dir ?? process.cwd(), recordOpt) : null;

  const positive = (v: number) => Number.isFinite(v) && v > 0;
  return {
    binary,
    binarySource,
    args,
    timeoutMs: r.number("timeoutMs", DEFAULT_TIMEOUT_MS, positive, "a number of milliseconds above 0"),
    transformTimeoutMs: r.number("transformTimeoutMs", DEFAULT_TRANSFORM_TIMEOUT_MS, positive, "a number of milliseconds above 0"),
    fallbackTimeoutMs: r.number("fallbackTimeoutMs", DEFAULT_FALLBACK_TIMEOUT_MS, positive, "a number of milliseconds above 0"),
    hungAfterMisses: r.number("hungAfterMisses", DEFAULT_HUNG_AFTER_MISSES, (v) => Number.isInteger(v) && v >= 0, "a whole number, 0 or more"),
    maxInFlightBytes: r.number("maxInFlightBytes", DEFAULT_MAX_IN_FLIGHT_BYTES, positive, "a number of bytes above 0"),
    maxReplyBytes: r.number("maxReplyBytes", DEFAULT_MAX_REPLY_BYTES, positive, "a number of bytes above 0"),
    logFile,
    trace,
    state,
    project: projectArg,
    stateSource,
    record,
    warnings: r.warnings,
    config,
  };
}
