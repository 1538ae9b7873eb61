// Plugin options: the shim's own settings, and the rest, which is the
// sidecar's config (PROTOCOL.md section 7) sent as-is with initialize.

import { accessSync, constants } from "node:fs";
import { homedir } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";

export type ShimSettings = {
  /** Path of the hookwire binary; null when none was found. */
  binary: string | null;
  binarySource: "option" | "env" | "path" | "none";
  args: string[];
  timeoutMs: number;
  transformTimeoutMs: number;
  /** Where the sidecar's stderr goes; null discards it. */
  logFile: string | null;
  trace: string | null;
  /** Options meant for the sidecar. */
  config: Record<string, unknown>;
};

/** Option names the shim consumes; they are never sent to the sidecar. */
export const SHIM_OPTIONS = ["binary", "args", "timeoutMs", "transformTimeoutMs", "logFile", "trace"] as const;

export const DEFAULT_TIMEOUT_MS = 250;
export const DEFAULT_TRANSFORM_TIMEOUT_MS = 2000;

function positive(v: unknown, fallback: number): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : fallback;
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

function isExecutable(file: string): boolean {
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

export function resolveSettings(options: unknown, env: NodeJS.ProcessEnv): ShimSettings {
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
  const stateHome = nonEmpty(env.XDG_STATE_HOME) ?? join(nonEmpty(env.HOME) ?? homedir(), ".local", "state");
  let logFile: string | null = join(stateHome, "hookwire", "sidecar.log");
  const logOpt = o.logFile !== undefined ? o.logFile : env.HOOKWIRE_LOG_FILE;
  if (logOpt === null || logOpt === "" || logOpt === false) logFile = null;
  else if (nonEmpty(logOpt)) logFile = nonEmpty(logOpt)!;

  return {
    binary,
    binarySource,
    args,
    timeoutMs: positive(o.timeoutMs, DEFAULT_TIMEOUT_MS),
    transformTimeoutMs: positive(o.transformTimeoutMs, DEFAULT_TRANSFORM_TIMEOUT_MS),
    logFile,
    trace: nonEmpty(o.trace) ?? nonEmpty(env.HOOKWIRE_SHIM_TRACE) ?? null,
    config,
  };
}
