// Catching up on subagents (PROTOCOL.md 4.10): the sidecar records a
// session's subagents from OpenCode's events, so a sidecar that starts
// while a session already has subagents (a restart, the plugin installed
// mid-session) would list only those it saw start. The first time this
// process sees a session at work after the sidecar became ready, it asks
// OpenCode for the session's children (`client.session.children`), their
// assistant messages (`client.session.messages`) and what runs now
// (`client.session.status`), and sends them as the events the sidecar
// missed: `session.created`, `message.updated`, then the child's status
// (idle when OpenCode says nothing runs). The records take each once (a
// creation known already is not news; a message counts once by its id), so
// catching up twice changes nothing. Bounded: CATCHUP_SESSIONS sessions a
// sidecar, CATCHUP_CHILDREN children and CATCHUP_MESSAGES messages each,
// children of children to CATCHUP_DEPTH.

import type { Logger } from "./log.js";
import { errorText } from "./sidecar.js";

/** The parts of OpenCode's SDK client (1.x) catching up uses. */
export type CatchUpClient = {
  session?: {
    children?: (o: { path: { id: string } }) => unknown;
    messages?: (o: { path: { id: string }; query?: { limit?: number } }) => unknown;
    status?: () => unknown;
  };
};

/** An event as the event hook gets it. */
export type HookEvent = { event: { type: string; properties: Record<string, unknown> } };

export const CATCHUP_SESSIONS = 256;
export const CATCHUP_CHILDREN = 50;
export const CATCHUP_MESSAGES = 200;
export const CATCHUP_DEPTH = 3;

/** An SDK answer's data (`{data}` with responseStyle "fields", or bare). */
function dataOf(res: unknown): unknown {
  return res && typeof res === "object" && "data" in res ? (res as { data?: unknown }).data : res;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export class SubagentCatchUp {
  /** Sessions caught up on (or known to be children) since the sidecar became ready. */
  private seen = new Set<string>();

  constructor(
    private readonly client: CatchUpClient | undefined,
    private readonly send: (e: HookEvent) => Promise<void> | void,
    private readonly log?: Logger,
  ) {}

  /** Whether OpenCode's client can be asked. */
  get enabled(): boolean {
    const s = this.client?.session;
    return typeof s?.children === "function" && typeof s.messages === "function" && typeof s.status === "function";
  }

  /** A sidecar became ready: what it knows starts again from its records. */
  reset(): void {
    this.seen.clear();
  }

  /** Looks at one of OpenCode's events: a session at work is caught up on once; a child's creation marks it seen. */
  onEvent(hookInput: unknown): void {
    const ev = (hookInput as { event?: { type?: unknown; properties?: Record<string, unknown> } } | undefined)?.event;
    const props = ev?.properties;
    if (!ev || !props) return;
    if (ev.type === "session.created") {
      const info = props.info as { id?: unknown; parentID?: unknown } | undefined;
      if (typeof info?.id === "string" && typeof info.parentID === "string") this.mark(info.id);
      return;
    }
    if (ev.type !== "session.status" && ev.type !== "session.idle") return;
    const id = props.sessionID;
    if (typeof id !== "string" || id === "" || this.seen.has(id) || !this.enabled) return;
    void this.catchUp(id);
  }

  private mark(id: string): boolean {
    if (this.seen.has(id) || this.seen.size >= CATCHUP_SESSIONS) return false;
    this.seen.add(id);
    return true;
  }

  /** Catches up on session's children; resolves when done (errors are logged, never thrown). */
  async catchUp(session: string): Promise<void> {
    if (!this.mark(session)) return;
    try {
      const children = await this.children(session);
      if (children.length === 0) return;
      const status = dataOf(await this.client!.session!.status!());
      if (!isObject(status)) return; // what runs is not known: claim nothing
      await this.walk(children, status, 1);
    } catch (err) {
      this.log?.log("debug", `hookwire: catching up on ${session}'s subagents failed: ${errorText(err)}`);
    }
  }

  private async children(session: string): Promise<Record<string, unknown>[]> {
    const list = dataOf(await this.client!.session!.children!({ path: { id: session } }));
    return Array.isArray(list) ? list.filter(isObject).slice(0, CATCHUP_CHILDREN) : [];
  }

  private async walk(children: Record<string, unknown>[], status: Record<string, unknown>, depth: number): Promise<void> {
    for (const info of children) {
      const id = info.id;
      if (typeof id !== "string" || typeof info.parentID !== "string") continue;
      this.seen.add(id);
      await this.send({ event: { type: "session.created", properties: { sessionID: id, info } } });
      const messages = dataOf(await this.client!.session!.messages!({ path: { id }, query: { limit: CATCHUP_MESSAGES } }));
      for (const m of Array.isArray(messages) ? messages.slice(-CATCHUP_MESSAGES) : []) {
        const mi = isObject(m) ? m.info : undefined;
        if (isObject(mi) && mi.role === "assistant") await this.send({ event: { type: "message.updated", properties: { sessionID: id, info: mi } } });
      }
      const st = status[id];
      if (isObject(st) && (st.type === "busy" || st.type === "retry")) {
        await this.send({ event: { type: "session.status", properties: { sessionID: id, status: st } } });
      } else {
        await this.send({ event: { type: "session.idle", properties: { sessionID: id } } });
      }
      if (depth < CATCHUP_DEPTH) await this.walk(await this.children(id), status, depth + 1);
    }
  }
}
