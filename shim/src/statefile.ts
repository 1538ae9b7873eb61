// The state file from the shim's side: the argument that tells the sidecar
// where its state lives (`--project DIR` by default, `--state FILE` for the
// `state` option), and the warning when the sidecar says the file is not in
// use. The file's path is the sidecar's to derive (PROTOCOL.md 6), so an
// OpenCode, an editor and `hookwire sessions` in one project agree on it.

import type { Logger } from "./log.js";
import { hasStateArg, type ShimSettings } from "./options.js";
import type { Sidecar } from "./sidecar.js";

/**
 * The sidecar's command line: the user's args, `--record FILE
 * --record-redact` for the `record` option, plus `--state FILE` (the
 * `state` option) or `--project DIR` (the default). The sidecar creates the
 * state directory itself (mode 0700) and writes the file 0600.
 */
export function sidecarArgs(settings: Pick<ShimSettings, "args" | "state" | "project"> & Partial<Pick<ShimSettings, "record">>): string[] {
  const args = [...settings.args];
  // A --record of the user's own in args wins (unredacted, if they ask).
  if (settings.record && !args.some((a) => /^--?record(=|$)/.test(a))) args.push("--record", settings.record, "--record-redact");
  if (settings.state) args.push("--state", settings.state);
  else if (settings.project) args.push("--project", settings.project);
  return args;
}

/**
 * The warning for a `status` result whose state file is not in use, or
 * undefined. Reads `stateFile.mode` (PROTOCOL.md 5); a sidecar too old to
 * send `stateFile` is read from its `state` text instead.
 */
export function stateFileWarning(status: unknown): string | undefined {
  const r = status as { stateFile?: unknown; state?: unknown } | null;
  if (!r || typeof r !== "object") return undefined;
  if (r.stateFile && typeof r.stateFile === "object") {
    const f = r.stateFile as { mode?: unknown; path?: unknown; reason?: unknown };
    if (f.mode !== "memory-only") return undefined;
    const why = [f.path, f.reason].filter((x): x is string => typeof x === "string" && x !== "").join(": ");
    return `hookwire: state file not used, aliases are kept in memory only${why ? ` (${why})` : ""}`;
  }
  if (typeof r.state === "string" && r.state.startsWith("memory-only")) {
    return `hookwire: state file not used, aliases are kept in memory only (${r.state})`;
  }
  return undefined;
}

/**
 * Asks a sidecar started with a state file for its status and says once,
 * in OpenCode's log and as a toast, when the file is not in use (another
 * OpenCode holds its lock, its directory cannot be created, ...).
 */
export async function checkStateFile(sidecar: Sidecar, args: string[], log: Logger, deadlineMs: number): Promise<void> {
  if (!hasStateArg(args)) return;
  const r = await sidecar.request("status", {}, deadlineMs);
  const warning = r.ok ? stateFileWarning(r.result) : undefined;
  if (warning) log.alert("state-memory-only", "warn", warning);
}
