// The state file from the shim's side: the `--state` argument it adds (and
// the private directory it creates for it), and the warning when the sidecar
// says the file is not in use.

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Logger } from "./log.js";
import { hasStateArg, type ShimSettings } from "./options.js";
import { errorText, type Sidecar } from "./sidecar.js";

/** The sidecar's command line: the user's args, plus `--state FILE` when the shim picked a file and could create its directory. */
export function sidecarArgs(settings: Pick<ShimSettings, "args" | "state"> & Partial<Pick<ShimSettings, "record">>, log: Logger): string[] {
  const args = [...settings.args];
  // A --record of the user's own in args wins (unredacted, if they ask).
  if (settings.record && !args.some((a) => /^--?record(=|$)/.test(a))) args.push("--record", settings.record, "--record-redact");
  if (!settings.state) return args;
  try {
    // The user's state directory is private (the file holds session ids
    // and task descriptions); the sidecar writes the file itself, 0600.
    mkdirSync(dirname(settings.state), { recursive: true, mode: 0o700 });
    args.push("--state", settings.state);
  } catch (err) {
    log.once(
      "state-dir",
      "warn",
      `hookwire: cannot create the state directory of ${settings.state} (${errorText(err)}); aliases are kept in memory only`,
    );
  }
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

/** Asks a sidecar started with `--state` for its status and says once in OpenCode's log when the file is not in use (e.g. another OpenCode holds its lock). */
export async function checkStateFile(sidecar: Sidecar, args: string[], log: Logger, deadlineMs: number): Promise<void> {
  if (!hasStateArg(args)) return;
  const r = await sidecar.request("status", {}, deadlineMs);
  const warning = r.ok ? stateFileWarning(r.result) : undefined;
  if (warning) log.once("state-memory-only", "warn", warning);
}
