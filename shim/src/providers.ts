// What OpenCode can reach, for the sidecar's model decisions (PROTOCOL.md
// 4.7): the connected providers, their models and OpenCode's default model,
// sent as a `providers.update` notification once after initialize (to every
// sidecar spawned) and again when it changes.
//
// Source: `client.config.providers()`, which OpenCode 1.18 answers with the
// connected providers only, each with its models, plus each provider's
// default model id (`client.provider.list()` also lists the whole model
// catalogue, about 6 MB, so it is not used). OpenCode's default model is
// its config's `model`, from the config hook. The list is fetched at start,
// and again on the events that say providers or config changed; an update
// goes out only when it differs from the last one sent.
//
// A `chat.message` for an agent listed in config.agentModels must not reach
// the sidecar before the list does (the sidecar then leaves the model), so
// it waits for the list, bounded by that hook's deadline. Nothing is fetched
// when config.agentModels lists no agent: the sidecar would not use it.

import type { Logger } from "./log.js";

/** The parts of OpenCode's SDK client this file uses. */
export type ProvidersClient = { config?: { providers?: () => unknown } };

/** providers.update's params. */
export type ProviderList = { connectedProviders: string[]; availableModels: string[]; defaultModel?: string };

/** The events after which the list is fetched again. */
export const REFETCH_EVENTS: ReadonlySet<string> = new Set(["catalog.updated", "config.updated", "integration.updated"]);

/** How often and how patiently to ask OpenCode. */
export type ProviderWaits = {
  /** The pause before asking again after a call failed. */
  retryPauseMs: number;
  /** Calls made at most per fetch. */
  maxCalls: number;
};

export const DEFAULT_PROVIDER_WAITS: ProviderWaits = { retryPauseMs: 1000, maxCalls: 3 };

/**
 * The list in a config.providers() answer (`{data: {providers, default}}`,
 * or that object bare), or undefined when it has none. A provider without
 * a string id, and model keys that are blank, are left out.
 */
export function providerListOf(res: unknown, defaultModel?: string): ProviderList | undefined {
  const body = (res as { data?: unknown } | null | undefined)?.data ?? res;
  const providers = (body as { providers?: unknown } | null | undefined)?.providers;
  if (!Array.isArray(providers)) return undefined;
  const list: ProviderList = { connectedProviders: [], availableModels: [] };
  for (const p of providers) {
    const id = (p as { id?: unknown } | null)?.id;
    if (typeof id !== "string" || id.trim() === "") continue;
    list.connectedProviders.push(id);
    const models = (p as { models?: unknown }).models;
    if (!models || typeof models !== "object") continue;
    for (const key of Object.keys(models)) if (key.trim() !== "") list.availableModels.push(`${id}/${key}`);
  }
  // OpenCode 2's answer (server.ts builds it from ctx.model) names the default model itself.
  const own = (body as { defaultModel?: unknown }).defaultModel;
  if (defaultModel) list.defaultModel = defaultModel;
  else if (typeof own === "string" && own.includes("/")) list.defaultModel = own;
  return list;
}

/** The config's `model` ("provider/model"), when it is one. */
export function defaultModelOf(cfg: unknown): string | undefined {
  const model = (cfg as { model?: unknown } | null | undefined)?.model;
  return typeof model === "string" && model.includes("/") ? model : undefined;
}

/** The agents config.agentModels lists. */
export function agentModelNames(config: Record<string, unknown>): Set<string> {
  const m = config.agentModels;
  return new Set(m && typeof m === "object" && !Array.isArray(m) ? Object.keys(m) : []);
}

/** The part of Sidecar that receives providers.update. */
export type ProvidersReceiver = {
  readonly state: string;
  readonly capabilities?: { methods: string[] };
  notify(method: string, params: unknown): boolean;
};

/** A timer that never keeps OpenCode's process alive. */
function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref?.());
}

/** Keeps the sidecar's provider list current. See the top of this file. */
export class Providers {
  private readonly agents: Set<string>;
  private list?: ProviderList;
  private defaultModel?: string;
  /** JSON of the list the current sidecar has; undefined: it has none. */
  private sent?: string;
  private sidecar?: ProvidersReceiver;
  private fetching = false;
  private again = false;
  /** Set once a fetch gave up: chat.message waits no more. */
  private failed = false;
  private stopped = false;
  /** Resolvers of the chat.messages waiting for the list to be sent. */
  private waiters = new Set<() => void>();

  constructor(
    config: Record<string, unknown>,
    private readonly client: ProvidersClient | undefined,
    private readonly log?: Logger,
    private readonly waits: ProviderWaits = DEFAULT_PROVIDER_WAITS,
  ) {
    this.agents = agentModelNames(config);
  }

  /** Whether the sidecar is told anything: config.agentModels lists an agent and the client can list providers. */
  get enabled(): boolean {
    return this.agents.size > 0 && typeof this.client?.config?.providers === "function";
  }

  /** The list as last fetched. */
  get current(): ProviderList | undefined {
    return this.list;
  }

  /** Starts the first fetch; `sidecar` gets the list. */
  start(sidecar: ProvidersReceiver): void {
    this.sidecar = sidecar;
    if (this.enabled) void this.fetch();
  }

  stop(): void {
    this.stopped = true;
    this.wake();
  }

  /** A sidecar answered initialize: it has no list yet. */
  onReady(): void {
    this.sent = undefined;
    this.deliver();
  }

  /** The config hook's argument: OpenCode's default model. */
  onConfig(cfg: unknown): void {
    try {
      const model = defaultModelOf(cfg);
      if (model === this.defaultModel) return;
      this.defaultModel = model;
      if (this.list) {
        this.list = { ...this.list, defaultModel: model };
        if (!model) delete this.list.defaultModel;
        this.deliver();
      }
    } catch {
      // a fallback only
    }
  }

  /** OpenCode's event hook: fetch again after events that change providers. */
  onEvent(input: unknown): void {
    const type = (input as { event?: { type?: unknown } } | undefined)?.event?.type;
    if (this.enabled && typeof type === "string" && REFETCH_EVENTS.has(type)) void this.fetch();
  }

  /**
   * Before a chat.message goes out: for an agent config.agentModels lists,
   * waits at most ms for the current sidecar to have the list. Resolves
   * with the ms waited. Never rejects.
   */
  async beforeChatMessage(input: unknown, output: unknown, ms: number): Promise<number> {
    if (!this.enabled || this.sent !== undefined || this.failed || this.stopped || ms <= 0) return 0;
    const sidecar = this.sidecar;
    if (sidecar?.state === "ready" && !sidecar.capabilities?.methods.includes("providers.update")) return 0;
    const agent =
      (input as { agent?: unknown } | undefined)?.agent ?? (output as { message?: { agent?: unknown } } | undefined)?.message?.agent;
    if (typeof agent !== "string" || !this.agents.has(agent)) return 0;
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    let done: () => void = () => {};
    await new Promise<void>((resolve) => {
      done = resolve;
      this.waiters.add(resolve);
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    this.waiters.delete(done);
    const waited = Date.now() - started;
    if (this.sent === undefined) this.log?.once("providers-late", "warn", `hookwire: OpenCode's provider list was not there within ${ms} ms for a chat.message of ${agent}; its model was left as it was`);
    return waited;
  }

  /** Fetches the list (retrying failures), then delivers it. A fetch asked for during one runs after it. */
  private async fetch(): Promise<void> {
    if (this.fetching) {
      this.again = true;
      return;
    }
    this.fetching = true;
    try {
      do {
        this.again = false;
        const list = await this.call();
        if (this.stopped) return;
        if (list) {
          this.list = list;
          this.failed = false;
          this.deliver();
        } else if (!this.list) {
          this.failed = true;
          this.log?.once("providers-missing", "warn", "hookwire: OpenCode's provider list could not be read; agentModels change no model");
          this.wake();
        }
      } while (this.again && !this.stopped);
    } finally {
      this.fetching = false;
    }
  }

  /** Asks OpenCode up to maxCalls times; undefined when every call failed. */
  private async call(): Promise<ProviderList | undefined> {
    for (let i = 0; i < this.waits.maxCalls && !this.stopped; i++) {
      if (i > 0) await sleep(this.waits.retryPauseMs);
      try {
        const res = await this.client!.config!.providers!.call(this.client!.config);
        const list = providerListOf(res, this.defaultModel);
        if (list) return list;
      } catch {
        // asked again below
      }
    }
    return undefined;
  }

  /** Sends the list to the sidecar if it is up and has not got this one. */
  private deliver(): void {
    const list = this.list;
    const sidecar = this.sidecar;
    if (!list || !sidecar || sidecar.state !== "ready") return;
    if (!sidecar.capabilities?.methods.includes("providers.update")) return;
    const json = JSON.stringify(list);
    if (json === this.sent) return;
    if (sidecar.notify("providers.update", list)) {
      const first = this.sent === undefined;
      this.sent = json;
      this.log?.log(first ? "info" : "debug", `hookwire: sent providers.update (${list.connectedProviders.length} providers, ${list.availableModels.length} models)`, {
        connectedProviders: list.connectedProviders,
        defaultModel: list.defaultModel,
      });
      this.wake();
    }
  }

  private wake(): void {
    for (const w of this.waiters) w();
    this.waiters.clear();
  }
}
