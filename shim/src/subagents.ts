// The `initialize` params the shim sends: the user's sidecar config, plus
// the subagents OpenCode knows when the user did not list them.

import { PROTOCOL_VERSION, type InitializeParams } from "./sidecar.js";
import type { AppLogClient } from "./log.js";

const SUBAGENTS_TIMEOUT_MS = 1500;

/** The parts of OpenCode's SDK client the shim uses. */
export type ShimClient = AppLogClient & {
  app?: AppLogClient["app"] & { agents?: () => unknown };
};

/** The names of the agents the orchestrator can delegate to, or undefined when OpenCode does not say. */
export async function fetchSubagents(client: ShimClient | undefined, ms = SUBAGENTS_TIMEOUT_MS): Promise<string[] | undefined> {
  try {
    const agents = client?.app?.agents;
    if (typeof agents !== "function") return undefined;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    });
    const res = await Promise.race([Promise.resolve(agents.call(client!.app)).catch(() => undefined), timeout]);
    clearTimeout(timer);
    const list = Array.isArray(res) ? res : (res as { data?: unknown } | undefined)?.data;
    if (!Array.isArray(list)) return undefined;
    return list
      .filter(
        (a): a is { name: string } =>
          !!a &&
          typeof a.name === "string" &&
          (a.mode === "subagent" || a.mode === "all") &&
          a.hidden !== true,
      )
      .map((a) => a.name);
  } catch {
    return undefined;
  }
}

/** Subagents named in OpenCode's config (agent.<name>.mode subagent or all, not hidden or disabled). */
export function subagentsFromConfig(cfg: unknown): string[] | undefined {
  const agents = (cfg as { agent?: unknown } | null)?.agent;
  if (!agents || typeof agents !== "object") return undefined;
  return Object.entries(agents as Record<string, unknown>)
    .filter(([, a]) => {
      const o = a as { mode?: unknown; hidden?: unknown; disable?: unknown } | null;
      return !!o && (o.mode === "subagent" || o.mode === "all") && o.hidden !== true && o.disable !== true;
    })
    .map(([name]) => name);
}

/**
 * Builds `initialize` params, once per spawn. Subagents come from the user's
 * options if given; else from OpenCode's agents list (asked once and kept);
 * else, when that call is slow or fails, from OpenCode's config, which the
 * config hook hands over right after plugins load.
 */
export class InitParams {
  private fetched?: string[];
  private fromConfig?: string[];
  private readonly userGaveSubagents: boolean;

  constructor(
    private readonly config: Record<string, unknown>,
    private readonly client: ShimClient | undefined,
    private readonly clientVersion: string,
  ) {
    this.userGaveSubagents = Object.prototype.hasOwnProperty.call(config, "subagents");
  }

  /** The config hook's argument: a fallback only, so bad input is ignored. */
  onConfig(cfg: unknown): void {
    try {
      this.fromConfig = subagentsFromConfig(cfg);
    } catch {
      // only a fallback
    }
  }

  async build(): Promise<InitializeParams> {
    const config = { ...this.config };
    if (!this.userGaveSubagents) {
      this.fetched ??= await fetchSubagents(this.client);
      const names = this.fetched ?? this.fromConfig;
      if (names) config.subagents = names;
    }
    return { protocolVersion: PROTOCOL_VERSION, clientInfo: { name: "hookwire-opencode", version: this.clientVersion }, config };
  }
}
