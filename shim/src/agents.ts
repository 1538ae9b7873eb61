// OpenCode's agents as the sidecar needs them: the primary agents (whose
// sessions it manages by default) and the subagents (which guidance lists),
// in `initialize`'s config, and in an `agents.update` notification when
// OpenCode's list comes after initialize (PROTOCOL.md 2).
//
// OpenCode answers `client.app.agents()` late while it is busy starting (it
// missed a 1.5 s deadline in 5 of 7 starts under load). So initialize waits
// only briefly; the call goes on in the background, is asked again when it
// fails or stays unanswered, and its answer reaches the sidecar running then
// and every one started later.

import { PROTOCOL_VERSION, type InitializeParams } from "./sidecar.js";
import type { AppLogClient, Logger } from "./log.js";

/** The parts of OpenCode's SDK client the shim uses. */
export type ShimClient = AppLogClient & {
  app?: AppLogClient["app"] & { agents?: () => unknown };
};

/** The agents OpenCode lists, by mode (an agent of mode `all` is in both). */
export type AgentLists = { primaryAgents: string[]; subagents: string[] };

/** How long to wait for OpenCode's agent list, and how often to ask. */
export type AgentWaits = {
  /** How long initialize waits for the list before it goes without. */
  initialMs: number;
  /** A call that has not answered by then is made again (the first one is still heard). */
  retryAfterMs: number;
  /** The pause before asking again after a call failed. */
  retryPauseMs: number;
  /** Calls made at most. */
  maxCalls: number;
  /** After this the list is given up on for the plugin's life. */
  totalMs: number;
};

export const DEFAULT_AGENT_WAITS: AgentWaits = { initialMs: 1500, retryAfterMs: 10_000, retryPauseMs: 1000, maxCalls: 3, totalMs: 30_000 };

/** The two lists in an agents() answer (an array, or `{data: array}`), or undefined. Hidden agents are left out. */
export function agentListsOf(res: unknown): AgentLists | undefined {
  const list = Array.isArray(res) ? res : (res as { data?: unknown } | null | undefined)?.data;
  if (!Array.isArray(list)) return undefined;
  const lists: AgentLists = { primaryAgents: [], subagents: [] };
  for (const a of list) {
    if (!a || typeof a.name !== "string" || a.name.trim() === "" || a.hidden === true) continue;
    if (a.mode === "primary" || a.mode === "all") lists.primaryAgents.push(a.name);
    if (a.mode === "subagent" || a.mode === "all") lists.subagents.push(a.name);
  }
  return lists;
}

/** A timer that never keeps OpenCode's process alive. */
function timer(fn: () => void, ms: number): NodeJS.Timeout {
  const t = setTimeout(fn, ms);
  t.unref?.();
  return t;
}

/**
 * Asks OpenCode for its agents until one call answers with a list: a call
 * that fails is made again after retryPauseMs, one still unanswered after
 * retryAfterMs is made again too (while the first is still heard), at most
 * maxCalls calls. Resolves with the first list, or undefined when every
 * call failed or totalMs passed. `cancel` stops it (undefined). Never rejects.
 */
export function learnAgents(client: ShimClient | undefined, waits: AgentWaits): { lists: Promise<AgentLists | undefined>; cancel(): void } {
  let finish: (v: AgentLists | undefined) => void = () => {};
  const timers = new Set<NodeJS.Timeout>();
  let done = false;
  const lists = new Promise<AgentLists | undefined>((resolve) => {
    finish = (v) => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      resolve(v);
    };
  });
  const agents = client?.app?.agents;
  if (typeof agents !== "function") {
    finish(undefined);
    return { lists, cancel: () => {} };
  }
  let calls = 0;
  let pending = 0;
  const later = (fn: () => void, ms: number) => {
    const t = timer(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  const call = () => {
    if (done || calls >= waits.maxCalls) return;
    calls++;
    pending++;
    let answered = false;
    const failed = () => {
      if (answered) return;
      answered = true;
      pending--;
      if (calls < waits.maxCalls) later(call, waits.retryPauseMs);
      else if (pending === 0) finish(undefined);
    };
    later(() => {
      if (!answered && calls < waits.maxCalls) call();
    }, waits.retryAfterMs);
    let result: unknown;
    try {
      result = agents.call(client!.app);
    } catch {
      failed();
      return;
    }
    Promise.resolve(result).then(
      (res) => {
        const l = agentListsOf(res);
        if (l) finish(l);
        else failed();
      },
      () => failed(),
    );
  };
  later(() => finish(undefined), waits.totalMs);
  call();
  return { lists, cancel: () => finish(undefined) };
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

/** The part of Sidecar that receives agents.update. */
export type AgentsReceiver = { readonly state: string; notify(method: string, params: unknown): boolean };

/**
 * Builds `initialize` params, once per spawn, and keeps the sidecar's agent
 * lists current. A list the user's options give wins and is never replaced.
 * Otherwise: OpenCode's agents list (learned once, in the background); while
 * it has not come, the subagents named in OpenCode's config (the config hook
 * hands it over right after plugins load) and no primary agents. When the
 * list comes after a sidecar was initialized without it, that sidecar gets
 * it by `agents.update`; every later spawn gets it in initialize.
 */
export class InitParams {
  private learned?: AgentLists;
  private fromConfig?: string[];
  private learning?: ReturnType<typeof learnAgents>;
  /** Whether the sidecar initialized last already has the learned lists. */
  private delivered = false;
  private sidecar?: AgentsReceiver;
  private stopped = false;
  private readonly userGave: { primaryAgents: boolean; subagents: boolean };

  constructor(
    private readonly config: Record<string, unknown>,
    private readonly client: ShimClient | undefined,
    private readonly clientVersion: string,
    private readonly log?: Logger,
    private readonly waits: AgentWaits = DEFAULT_AGENT_WAITS,
  ) {
    const has = (k: string) => Object.prototype.hasOwnProperty.call(config, k);
    this.userGave = { primaryAgents: has("primaryAgents"), subagents: has("subagents") };
  }

  /** The lists learned from OpenCode so far. */
  get agents(): AgentLists | undefined {
    return this.learned;
  }

  /** Starts asking OpenCode for its agents (once); `sidecar` gets agents.update when they come late. */
  start(sidecar?: AgentsReceiver): void {
    if (sidecar) this.sidecar = sidecar;
    if (this.learning || (this.userGave.primaryAgents && this.userGave.subagents)) return;
    const started = Date.now();
    this.learning = learnAgents(this.client, this.waits);
    void this.learning.lists.then((lists) => {
      if (!lists) {
        if (!this.stopped && typeof this.client?.app?.agents === "function")
          this.log?.once("agents-missing", "warn", `hookwire: OpenCode's agent list did not come within ${Math.round(this.waits.totalMs / 1000)} s; using the agents named in its config`);
        return;
      }
      this.learned = lists;
      this.log?.log("debug", `hookwire: OpenCode's agents after ${Date.now() - started} ms`, { ...lists });
      this.deliver();
    });
  }

  /** Stops waiting for OpenCode's agents (the plugin is disposed). */
  stop(): void {
    this.stopped = true;
    this.learning?.cancel();
  }

  /** The config hook's argument: a fallback only, so bad input is ignored. */
  onConfig(cfg: unknown): void {
    try {
      this.fromConfig = subagentsFromConfig(cfg);
    } catch {
      // only a fallback
    }
  }

  /** A sidecar answered initialize: it gets the lists it was not initialized with. */
  onReady(): void {
    this.deliver();
  }

  async build(): Promise<InitializeParams> {
    this.start();
    if (!this.learned && this.learning) {
      let t: NodeJS.Timeout | undefined;
      await Promise.race([this.learning.lists, new Promise((r) => (t = setTimeout(r, this.waits.initialMs)))]);
      clearTimeout(t);
    }
    const config = { ...this.config };
    const lists = this.learned;
    if (!this.userGave.subagents) {
      const names = lists?.subagents ?? this.fromConfig;
      if (names) config.subagents = names;
    }
    if (!this.userGave.primaryAgents && lists) config.primaryAgents = lists.primaryAgents;
    this.delivered = !!lists;
    return { protocolVersion: PROTOCOL_VERSION, clientInfo: { name: "hookwire-opencode", version: this.clientVersion }, config };
  }

  /** Sends the learned lists to the sidecar if it is up and lacks them. */
  private deliver(): void {
    const lists = this.learned;
    const sidecar = this.sidecar;
    if (!lists || this.delivered || !sidecar || sidecar.state !== "ready") return;
    const params: Partial<AgentLists> = {};
    if (!this.userGave.primaryAgents) params.primaryAgents = lists.primaryAgents;
    if (!this.userGave.subagents) params.subagents = lists.subagents;
    if (sidecar.notify("agents.update", params)) {
      this.delivered = true;
      this.log?.log("info", "hookwire: OpenCode's agents came after initialize; sent agents.update", { ...params });
    }
  }
}
