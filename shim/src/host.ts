// The OpenCode the shim runs in, and what it can do there (README's
// compatibility table; docs/OPENCODE.md "Every OpenCode version").
//
// Hooks a host lacks are never called, so nothing fails: it is just off.
// The shim names what is off once (log and toast, when toasts work), and
// refuses to start at all below the oldest OpenCode whose hooks it needs,
// saying so instead of half working.

import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * The oldest OpenCode 1.x hookwire runs on, verified end to end
 * (scripts/e2e-opencode.sh). The hooks it needs exist from 1.1.13 (the
 * first whose `experimental.chat.system.transform` gets the session id),
 * but up to 1.1.34 the task tool names its child in a `<task_metadata>`
 * block the sidecar does not read, so aliases fail (measured on 1.1.16);
 * 1.1.53, the next version the registry serves, prints `task_id: ses_...`
 * and passes every check.
 */
export const MIN_OPENCODE = "1.1.53";

/** Where the shim is running: OpenCode 1.x or 2, and its version when known. */
export type HostInfo = { generation: 1 | 2; version?: string };

/** Something hookwire uses that a host may lack, and what depends on it. */
export type Feature = "toasts" | "providers" | "variant";

export const FEATURE_TEXT: Record<Feature, string> = {
  toasts: "toasts (problems go to OpenCode's log only)",
  providers: "the provider list for agentModels (client.config.providers; OpenCode 2: ctx.model.list); model fallback leaves models as they are",
  variant: "model variants (this OpenCode keeps a message's variant outside its model); agentModels entries apply without their variant",
};

/** -1, 0, 1 as version a is older, the same, newer than b (numeric dot parts; anything else counts as 0). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/).slice(0, 3).map((n) => Number.parseInt(n, 10) || 0);
  const pb = b.split(/[.+-]/).slice(0, 3).map((n) => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) < (pb[i] ?? 0) ? -1 : 1;
  return 0;
}

/** Whether a version is too old for hookwire; an unknown version is given the benefit of the doubt. */
export function belowMinimum(version: string | undefined): boolean {
  return typeof version === "string" && /^\d+\.\d+/.test(version) && compareVersions(version, MIN_OPENCODE) < 0;
}

/**
 * OpenCode's version from the binary running this plugin: npm installs it
 * as node_modules/opencode-<os>-<arch>/bin/opencode beside the package's
 * package.json. Undefined when that is not how it was installed.
 */
export function versionBesideBinary(execPath: string = process.execPath): string | undefined {
  if (!/^opencode/.test(basename(execPath))) return undefined;
  try {
    const pkg = JSON.parse(readFileSync(join(dirname(dirname(execPath)), "package.json"), "utf8"));
    if (typeof pkg?.name === "string" && pkg.name.startsWith("opencode") && typeof pkg.version === "string") return pkg.version;
  } catch {
    // not an npm install
  }
  return undefined;
}

/** The features a 1.x client object shows it has (the rest is learnt from the first hook calls). */
export function clientFeatures(client: unknown): Partial<Record<Feature, boolean>> {
  const c = client as { tui?: { showToast?: unknown }; config?: { providers?: unknown } } | undefined;
  return {
    toasts: typeof c?.tui?.showToast === "function",
    providers: typeof c?.config?.providers === "function",
  };
}

/**
 * What this host can do, as learnt: features start unknown and are set
 * when seen; `off()` lists the ones known missing. Reported once through
 * `report` (the shim's log and toast) when a missing one first matters.
 */
export class HostCapabilities {
  private readonly known = new Map<Feature, boolean>();
  private readonly reported = new Set<Feature>();

  constructor(
    readonly host: HostInfo,
    private readonly report: (message: string, off: Feature[]) => void,
  ) {}

  private readonly ignored = new Set<Feature>();

  /** A feature nothing configured depends on: learnt, never named. */
  ignore(feature: Feature): void {
    this.ignored.add(feature);
  }

  set(feature: Feature, has: boolean): void {
    this.known.set(feature, has);
  }

  has(feature: Feature): boolean | undefined {
    return this.known.get(feature);
  }

  off(): Feature[] {
    return [...this.known].filter(([, has]) => !has).map(([f]) => f);
  }

  /** Names the features known missing and not named yet, in one message; nothing when none. */
  announce(): void {
    const fresh = this.off().filter((f) => !this.reported.has(f) && !this.ignored.has(f));
    if (fresh.length === 0) return;
    for (const f of fresh) this.reported.add(f);
    const where = `OpenCode ${this.host.version ?? (this.host.generation === 2 ? "2" : "1.x (version unknown)")}`;
    this.report(`hookwire: on ${where}, off: ${fresh.map((f) => FEATURE_TEXT[f]).join("; ")}`, fresh);
  }

  /**
   * chat.message's output tells where the host keeps a message's variant:
   * on `message.model` (1.14 and later) or beside it as `message.variant`
   * (1.3 and older). Learnt from the first call.
   */
  learnVariant(output: unknown): void {
    if (this.known.has("variant")) return;
    const message = (output as { message?: Record<string, unknown> } | undefined)?.message;
    if (!message || typeof message !== "object") return;
    this.set("variant", !Object.prototype.hasOwnProperty.call(message, "variant"));
  }
}

/**
 * After chat.message was forwarded on a host without variants on the model:
 * a variant the sidecar put on `message.model` is taken off again, so the
 * model change applies as a whole and nothing half-applied is left.
 */
export function dropModelVariant(output: unknown): void {
  const model = (output as { message?: { model?: Record<string, unknown> } } | undefined)?.message?.model;
  if (model && typeof model === "object" && "variant" in model) delete model.variant;
}
