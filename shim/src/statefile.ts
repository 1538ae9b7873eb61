// The state file from the shim's side: the argument that tells the sidecar
// where its state lives (`--project DIR` by default, `--state FILE` for the
// `state` option), and the warnings when the sidecar says the file is not in
// use, read-only, or has a problem. The file's path is the sidecar's to derive (PROTOCOL.md 6), so an
// OpenCode, an editor and `hookwire sessions` in one project agree on it.

import type { Logger } from "./log.js";
import { hasStateArg, type ShimSettings } from "./options.js";
import type { StatusResult } from "./protocol.gen.js";
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
 * The warnings for a `status` result, each with the key it is told once
 * under: the state database not in use (`memory-only`), read but never
 * written (`read-only`), and the problems that did not stop it being used
 * (`stateFile.warnings`: a state directory others can write, a corrupt
 * database moved aside). Reads `stateFile` (PROTOCOL.md 5, 6); a sidecar too
 * old to send it is read from its `state` text instead.
 */
export function stateFileWarnings(status: Partial<Pick<StatusResult, "stateFile" | "state">> | null | undefined): { key: string; message: string }[] {
  const r = status;
  if (!r || typeof r !== "object") return [];
  if (r.stateFile && typeof r.stateFile === "object") {
    const f = r.stateFile;
    const out: { key: string; message: string }[] = [];
    const why = [f.path, f.reason].filter((x): x is string => typeof x === "string" && x !== "").join(": ");
    if (f.mode === "memory-only") {
      out.push({ key: "state-memory-only", message: `hookwire: state file not used, aliases are kept in memory only${why ? ` (${why})` : ""}` });
    } else if (f.mode === "read-only") {
      out.push({ key: "state-read-only", message: `hookwire: state file is read-only: its aliases resolve, new ones last until OpenCode exits${why ? ` (${why})` : ""}` });
    }
    if (Array.isArray(f.warnings)) {
      for (const w of f.warnings) if (typeof w === "string" && w !== "") out.push({ key: `state-warning:${w}`, message: `hookwire: ${w}` });
    }
    return out;
  }
  if (typeof r.state === "string" && r.state.startsWith("memory-only")) {
    return [{ key: "state-memory-only", message: `hookwire: state file not used, aliases are kept in memory only (${r.state})` }];
  }
  return [];
}

/** The first of stateFileWarnings, or undefined. */
export function stateFileWarning(status: Parameters<typeof stateFileWarnings>[0]): string | undefined {
  return stateFileWarnings(status)[0]?.message;
}

/**
 * Asks a sidecar started with a state file for its status and says once,
 * in OpenCode's log and as a toast, when the file is not in use (a symlink
 * at its path, a newer format, ...), is read-only, or has a warning.
 */
export async function checkStateFile(sidecar: Sidecar, args: string[], log: Logger, deadlineMs: number): Promise<void> {
  if (!hasStateArg(args)) return;
  const r = await sidecar.request("status", {}, deadlineMs);
  if (!r.ok) return;
  for (const w of stateFileWarnings(r.result)) log.alert(w.key, "warn", w.message);
}
