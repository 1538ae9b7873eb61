// Plugin options: the shim's own settings, and the rest, which is the
// sidecar's config (PROTOCOL.md section 7) sent as-is with initialize.

import { createHash } from "node:crypto";
import { accessSync, constants } from "node:fs";
import { homedir } from "node:os";
import { basename, delimiter, isAbsolute, join, parse, resolve } from "node:path";
import { DEFAULT_HUNG_AFTER_MISSES, DEFAULT_MAX_IN_FLIGHT_BYTES } from "./sidecar.js";

export type ShimSettings = {
  /** Path of the hookwire binary; null when none was found. */
  binary: string | null;
  binarySource: "option" | "env" | "path" | "none";
  args: string[];
  timeoutMs: number;
  transformTimeoutMs: number;
  /** Deadline misses in a row before the sidecar is killed as hung; 0: never. */
  hungAfterMisses: number;
  /** Most bytes written to the sidecar and not yet read by it. */
  maxInFlightBytes: number;
  /** Where the sidecar's stderr goes; null discards it. */
  logFile: string | null;
  trace: string | null;
  /** The state file passed as `--state` (PROTOCOL.md 6); null: memory only. */
  state: string | null;
  /**
   * Where state came from: "default" (per project, under the user's state
   * directory), "option" (the `state` option), "args" (a `--state` in
   * `args`, which wins), "off" (`state: false`), "no-project" (the default,
   * but OpenCode gave no project directory).
   */
  stateSource: "default" | "option" | "args" | "off" | "no-project";
  /**
   * A redacted recording of the session, for a bug report: passed as
   * `--record FILE --record-redact`; null: none.
   */
  record: string | null;
  /** Options meant for the sidecar. */
  config: Record<string, unknown>;
};

/** Option names the shim consumes; they are never sent to the sidecar. */
export const SHIM_OPTIONS = [
  "binary",
  "args",
  "timeoutMs",
  "transformTimeoutMs",
  "hungAfterMisses",
  "maxInFlightBytes",
  "logFile",
  "trace",
  "state",
  "record",
] as const;

/** The directories OpenCode's plugin input names (PluginInput.worktree, .directory). */
export type ProjectDirs = { worktree?: unknown; directory?: unknown };

export const DEFAULT_TIMEOUT_MS = 250;
export const DEFAULT_TRANSFORM_TIMEOUT_MS = 2000;
export { DEFAULT_HUNG_AFTER_MISSES, DEFAULT_MAX_IN_FLIGHT_BYTES } from "./sidecar.js";

function positive(v: unknown, fallback: number): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : fallback;
}

function count(v: unknown, fallback: number): number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : fallback;
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
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

/** `$XDG_STATE_HOME/hookwire`, else `~/.local/state/hookwire`. */
export function stateDir(env: NodeJS.ProcessEnv): string {
  const stateHome = nonEmpty(env.XDG_STATE_HOME) ?? join(nonEmpty(env.HOME) ?? homedir(), ".local", "state");
  return join(stateHome, "hookwire");
}

/**
 * The project directory that keys the state file: OpenCode's worktree (the
 * git top level, the same for every subdirectory of a repository), else the
 * directory OpenCode runs in. Outside git OpenCode reports worktree "/" for
 * every directory, so a root worktree does not count.
 */
export function projectDir(project: ProjectDirs | undefined): string | undefined {
  const worktree = nonEmpty(project?.worktree);
  if (worktree && isAbsolute(worktree) && parse(resolve(worktree)).root !== resolve(worktree)) return resolve(worktree);
  const directory = nonEmpty(project?.directory);
  return directory ? resolve(directory) : undefined;
}

/**
 * A readable, collision-safe file name for a project directory: its base
 * name (letters, digits, `.`, `_`, `-`; at most 40 characters) + "-" + the
 * first 16 hex digits of the SHA-256 of the absolute path.
 */
export function stateKey(dir: string): string {
  const abs = resolve(dir);
  const name =
    basename(abs)
      .replace(/[^A-Za-z0-9._-]+/g, "_")
      .replace(/^[.]+/, "")
      .slice(0, 40) || "project";
  const hash = createHash("sha256").update(abs).digest("hex").slice(0, 16);
  return `${name}-${hash}`;
}

/** The default state file of a project: `<stateDir>/<stateKey>.json`. */
export function defaultStatePath(env: NodeJS.ProcessEnv, dir: string): string {
  return join(stateDir(env), `${stateKey(dir)}.json`);
}

export function hasStateArg(args: string[]): boolean {
  return args.some((a) => /^--?state(=|$)/.test(a));
}

export function resolveSettings(options: unknown, env: NodeJS.ProcessEnv, project?: ProjectDirs): ShimSettings {
  const o: Record<string, unknown> =
    options !== null && typeof options === "object" && !Array.isArray(options) ? (options as Record<string, unknown>) : {};
  const config: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (!(SHIM_OPTIONS as readonly string[]).includes(k)) config[k] = v;
  }

  let binary: string | null = null;
  let binarySource: ShimSettings["binarySource"] = "none";
  const fromOption = nonEmpty(o.binary);
  const fromEnv = nonEmpty(env.HOOKWIRE_BIN);
  if (fromOption) {
    binary = fromOption;
    binarySource = "option";
  } else if (fromEnv) {
    binary = fromEnv;
    binarySource = "env";
  } else {
    binary = findOnPath("hookwire", env.PATH);
    if (binary) binarySource = "path";
  }
  // A bare name in binary/HOOKWIRE_BIN is looked up on PATH too.
  if (binary && binarySource !== "path" && !isAbsolute(binary) && !binary.includes("/")) {
    binary = findOnPath(binary, env.PATH) ?? binary;
  }

  const args = Array.isArray(o.args) ? o.args.filter((a): a is string => typeof a === "string") : [];
  let logFile: string | null = join(stateDir(env), "sidecar.log");
  const logOpt = o.logFile !== undefined ? o.logFile : env.HOOKWIRE_LOG_FILE;
  if (logOpt === null || logOpt === "" || logOpt === false) logFile = null;
  else if (nonEmpty(logOpt)) logFile = nonEmpty(logOpt)!;

  let state: string | null = null;
  let stateSource: ShimSettings["stateSource"];
  const dir = projectDir(project);
  if (hasStateArg(args)) {
    stateSource = "args";
  } else if (o.state === false || o.state === null || o.state === "") {
    stateSource = "off";
  } else if (nonEmpty(o.state)) {
    state = resolve(dir ?? process.cwd(), nonEmpty(o.state)!);
    stateSource = "option";
  } else if (dir) {
    state = defaultStatePath(env, dir);
    stateSource = "default";
  } else {
    stateSource = "no-project";
  }

  // A relative path is taken from the project directory, like state's.
  const recordOpt = nonEmpty(o.record) ?? nonEmpty(env.HOOKWIRE_RECORD);
  const record = recordOpt ? resolve(dir ?? process.cwd(), recordOpt) : null;

  return {
    binary,
    binarySource,
    args,
    timeoutMs: positive(o.timeoutMs, DEFAULT_TIMEOUT_MS),
    transformTimeoutMs: positive(o.transformTimeoutMs, DEFAULT_TRANSFORM_TIMEOUT_MS),
    hungAfterMisses: count(o.hungAfterMisses, DEFAULT_HUNG_AFTER_MISSES),
    maxInFlightBytes: positive(o.maxInFlightBytes, DEFAULT_MAX_IN_FLIGHT_BYTES),
    logFile,
    trace: nonEmpty(o.trace) ?? nonEmpty(env.HOOKWIRE_SHIM_TRACE) ?? null,
    state,
    stateSource,
    record,
    config,
  };
}
