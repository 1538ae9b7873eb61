// The package's `./tui` entry: hookwire's section in OpenCode's sidebar,
// and two palette commands (open a subagent, stop a running one).
//
// OpenCode 1.x (TUI plugins, 1.18.33): the default export `{id, tui}`;
// `tui(api, options)` registers a `sidebar_content` slot
// (`@opencode-ai/plugin/tui`: TuiPluginModule, api.slots.register) whose
// elements are built with `@opentui/solid`'s createElement/insert/setProp
// (kept external: OpenCode hands the plugin its own copies). OpenCode 2:
// the same export's `setup(ctx)` appends to the `sidebar.content` slot
// (`ctx.ui.slot`) and registers its keymap layer once, inside an `app`
// slot claim. Both entries share one controller (SectionData) and draw the
// same lines (tuimodel.ts).
//
// The data is the observer's (`hookwire observe`, PROTOCOL.md 9), the
// process the editors use: it reads the project's state database
// read-only, so the section is right under `opencode attach` too and is
// never a third copy of the state. Draw on change: the observer says
// which parents changed (`subagents.changed`, `sessions.changed`), and
// OpenCode's own events about a child of the session on screen ask again
// (debounced); nothing is asked or redrawn at rest, and nothing for a
// parent no section shows. A running subagent's elapsed time ticks once a
// second while one is on screen. The start-up problems are the shim's own
// checks (resolveSettings) over the server part's options as OpenCode
// passes them (api.state.config.plugin), shown while they last and
// toasted once the TUI is ready. Every string that reaches the screen is
// made safe (tuitext.ts). Nothing is written to the terminal; nothing
// thrown reaches OpenCode.

import { createElement, insert, setProp } from "@opentui/solid";
import { onCleanup } from "solid-js";
import { resolveSettings, type ShimSettings } from "./options.js";
import { Logger } from "./log.js";
import { OBSERVER_NOTIFICATIONS, PROTOCOL_VERSION } from "./contract.gen.js";
import { startTracked, stopTracked } from "./lifecycle.js";
import { Sidecar, type SidecarState } from "./sidecar.js";
import {
  MAX_LINES,
  needsClock,
  newSwitches,
  rowOfEntry,
  sectionLines,
  stateWord,
  type ObserverState,
  type SectionCache,
  type SectionEntry,
  type SubagentPage,
  type SubagentRow,
} from "./tuimodel.js";
import { screenLine, safeText } from "./tuitext.js";
import { stateProblemOf } from "./tuistate.js";

/** The npm name whose server entry the TUI looks for in OpenCode's plugin list. */
const PACKAGE = "hookwire-opencode";
/** How long after a change the section asks the observer (changes in a burst are asked for once). */
const OBSERVER_DEBOUNCE_MS = 50;
/** How long after one of OpenCode's events the section asks (a streaming turn sends many). */
const EVENT_DEBOUNCE_MS = 250;
/** The rows asked per page for the section: no more than it can draw. */
const SECTION_LIMIT = MAX_LINES;
/** The rows asked per page for the commands' dialogs, and the most pages read per command. */
const COMMAND_LIMIT = 200;
const COMMAND_PAGES = 5;
/** How long after the observer was given up on (it stopped too often) a new one is started. */
const OBSERVER_RESTART_MS = 30_000;
/** The width of a dialog's option title. */
const DIALOG_WIDTH = 72;

/** Whether a plugin list entry names this package. */
function isHookwire(name: unknown): name is string {
  return typeof name === "string" && (name === PACKAGE || name.startsWith(`${PACKAGE}@`) || /[/\\]hookwire-opencode([/\\]|$)/.test(name));
}

/**
 * The server part's options from OpenCode's plugin list, when it names
 * this package: `name`, `[name, options]` (1.x's `plugin`) or
 * `{"package": name, "options": {...}}` (OpenCode 2's `plugins`).
 */
export function serverOptions(plugins: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(plugins)) return undefined;
  for (const p of plugins) {
    let name: unknown;
    let o: unknown;
    if (typeof p === "string") name = p;
    else if (Array.isArray(p)) [name, o] = p;
    else if (p && typeof p === "object") ({ package: name, options: o } = p as { package?: unknown; options?: unknown });
    if (!isHookwire(name)) continue;
    return o && typeof o === "object" && !Array.isArray(o) ? (o as Record<string, unknown>) : {};
  }
  return undefined;
}

/** The problems the shim reports at start, as it words them. */
export function startupWarnings(settings: ShimSettings): string[] {
  const out = [...settings.warnings];
  if (!settings.binary) out.push("hookwire: sidecar binary not found; hooks pass through unchanged (set the binary option or HOOKWIRE_BIN)");
  return out;
}

/**
 * The shim's log for the observer: never the terminal or OpenCode's log;
 * the config warnings the observer's initialize answers (a typo in the
 * sidecar's config, judged as serve judges it) are kept for the section.
 */
class SectionLog extends Logger {
  readonly configWarnings: string[] = [];
  constructor() {
    super(undefined, "hookwire", undefined);
  }
  override alert(kind: string, _level: Parameters<Logger["alert"]>[1], _message: string, extra?: Record<string, unknown>): void {
    const w = (extra as { warnings?: unknown } | undefined)?.warnings;
    if (kind === "config-warnings" && Array.isArray(w)) {
      this.configWarnings.splice(0, this.configWarnings.length, ...w.filter((x): x is string => typeof x === "string"));
    }
  }
}

/** What the section and the commands need of OpenCode's TUI, on either generation. */
export type SectionHost = {
  /** The session's parent, when it is a subagent's. */
  parentOf: (sessionID: string) => string | undefined;
  /** The session on screen. */
  current?: () => string | undefined;
  /** OpenCode's own list of a session's children, for the commands when the observer has none (an older sidecar, no binary). */
  children?: (sessionID: string) => Promise<Array<{ id: string; title?: string }>>;
  /** Whether OpenCode has the session running (its status), when it knows. */
  running?: (sessionID: string) => boolean | undefined;
  /** Stops a session (1.x: client.session.abort; OpenCode 2: client.session.interrupt); absent where the host has no such call. */
  abort?: (sessionID: string) => Promise<void>;
  toast?: (t: { variant: "info" | "warning" | "error"; message: string; duration?: number }) => void;
  /** A select dialog; resolves the chosen value (undefined when dismissed). */
  select?: (title: string, options: Array<{ title: string; value: string }>) => Promise<string | undefined> | void;
  navigate?: (sessionID: string) => void;
  /** The context window OpenCode knows for a model ("provider/model"): 1.x's providers in the TUI's state. */
  contextLimit?: (model: string) => number | undefined;
};

/**
 * The section's live data: one observer per TUI process, asked for the
 * parents on screen when something changed (never on a timer).
 */
export class SectionData {
  observer: ObserverState = { kind: "starting" };
  /** What keeps the sidecar from keeping aliases (memory only, read-only), "" when nothing. */
  stateProblem = "";
  readonly cache = new Map<string, SectionCache>();
  private readonly log = new SectionLog();
  private readonly pages = new Map<string, SubagentPage>();
  /** Parents on screen, with how many views show each. */
  private readonly shown = new Map<string, number>();
  private readonly listeners = new Set<() => void>();
  private readonly dirty = new Set<string>();
  private statusDirty = false;
  private flushTimer?: NodeJS.Timeout;
  private flushing = false;
  private sidecar?: Sidecar;
  private restartTimer?: NodeJS.Timeout;
  private disposed = false;
  /** The observer serves no subagents.list (an older binary): sessions.list's aliases then. */
  private legacy = false;
  /** The model switches already seen (newSwitches), and told of new ones: OpenCode 2's TUI toasts them (1.x's server part does). */
  private readonly seenSwitches = new Set<string>();
  private readonly startedAt = Date.now();
  onSwitch?: (line: string) => void;
  /** Observer requests made (a test counts them at rest). */
  requests = 0;

  constructor(
    private readonly settings: ShimSettings,
    private readonly dir: string,
  ) {}

  start(): void {
    if (this.sidecar || this.disposed) return;
    if (!this.settings.binary) {
      this.observer = { kind: "off", why: "no hookwire binary" };
      return;
    }
    const args = ["observe"];
    if (this.settings.state) args.push("--state", this.settings.state);
    else args.push("--project", this.dir);
    const sidecar = new Sidecar({
      binary: this.settings.binary,
      args,
      env: process.env,
      // The server part's config, so the observer judges it as serve does.
      initParams: async () => ({ protocolVersion: PROTOCOL_VERSION, clientInfo: { name: "hookwire-opencode-tui", version: "" }, config: this.settings.config }),
      // Never the terminal: the TUI owns it.
      log: this.log,
      stderrFile: null,
      maxCrashes: 3,
      notifications: [...OBSERVER_NOTIFICATIONS, "subagents.changed", "sessions.changed"],
      onNotification: (n) => this.notified(n.method as string, n.params),
      onStateChange: (s) => this.stateChanged(sidecar, s),
    });
    this.sidecar = sidecar;
    startTracked(sidecar);
  }

  private stateChanged(s: Sidecar, state: SidecarState): void {
    if (s !== this.sidecar || this.disposed) return;
    if (state === "ready") {
      this.legacy = false;
      this.statusDirty = true;
      for (const p of this.shown.keys()) this.dirty.add(p);
      this.schedule(0);
      return;
    }
    if (state === "backoff") this.setObserver({ kind: "gone", why: "the observer is restarting" });
    if (state === "failed") {
      this.setObserver({ kind: "gone", why: "observer gone" });
      // The fallback when the observer died for good: a new one later (one timer, only then).
      clearTimeout(this.restartTimer);
      this.restartTimer = setTimeout(() => {
        this.restartTimer = undefined;
        if (this.disposed || this.sidecar !== s) return;
        this.sidecar = undefined;
        void stopTracked(s);
        this.start();
      }, OBSERVER_RESTART_MS);
      this.restartTimer.unref?.();
    }
  }

  private notified(method: string, params: unknown): void {
    if (method === "subagents.changed") {
      const parents = (params as { parents?: unknown } | undefined)?.parents;
      if (!Array.isArray(parents)) {
        for (const p of this.shown.keys()) this.dirty.add(p);
      } else {
        for (const p of parents) if (typeof p === "string" && this.shown.has(p)) this.dirty.add(p);
      }
    } else if (method === "sessions.changed") {
      // Aliases and prompt-cache figures: the status (cache shares), and
      // with an older observer the lists too.
      this.statusDirty = true;
      for (const p of this.shown.keys()) if (this.legacy || this.pages.get(p)?.fromEntries) this.dirty.add(p);
    } else {
      return;
    }
    this.schedule(OBSERVER_DEBOUNCE_MS);
  }

  /** One of OpenCode's events about session (its own, or a child's): the parent on screen is asked again. */
  sessionEvent(sessionID: string | undefined, parentID: string | undefined): void {
    let hit = false;
    for (const id of [parentID, sessionID]) {
      if (id && this.shown.has(id)) {
        this.dirty.add(id);
        hit = true;
      }
    }
    if (hit) this.schedule(EVENT_DEBOUNCE_MS);
  }

  private schedule(ms: number): void {
    if (this.flushTimer || this.disposed) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, ms);
    this.flushTimer.unref?.();
  }

  private async flush(): Promise<void> {
    if (this.flushing) {
      this.schedule(OBSERVER_DEBOUNCE_MS);
      return;
    }
    const s = this.sidecar;
    if (!s || s.state !== "ready") return;
    this.flushing = true;
    let changed = false;
    try {
      if (this.statusDirty) {
        this.statusDirty = false;
        changed = (await this.readStatus(s)) || changed;
      }
      const parents = [...this.dirty];
      this.dirty.clear();
      for (const parent of parents) {
        if (!this.shown.has(parent)) continue;
        const page = await this.fetchPage(parent, SECTION_LIMIT);
        if (!page) continue;
        const before = this.pages.get(parent);
        this.pages.set(parent, page);
        if (!before || JSON.stringify(before) !== JSON.stringify(page)) changed = true;
        this.tellSwitches(page, !before);
      }
    } catch {
      // the next change asks again
    } finally {
      this.flushing = false;
    }
    if (changed) this.emit();
  }

  private async readStatus(s: Sidecar): Promise<boolean> {
    this.requests++;
    const st = await s.request("status", {} as never, 2000);
    if (!st.ok) return false;
    const r = st.result as { version?: string; observer?: { lastLoad?: string; file?: string }; cache?: { perSession?: SectionCache[] } };
    const before = JSON.stringify([this.observer, this.stateProblem, [...this.cache.values()]]);
    this.observer = { kind: "ready", version: r.version, lastLoad: r.observer?.lastLoad, file: r.observer?.file };
    this.stateProblem = await stateProblemOf(this.settings, r.observer?.file);
    this.cache.clear();
    for (const c of r.cache?.perSession ?? []) if (typeof c?.session === "string") this.cache.set(c.session, c);
    return before !== JSON.stringify([this.observer, this.stateProblem, [...this.cache.values()]]);
  }

  private tellSwitches(page: SubagentPage, first: boolean): void {
    for (const line of newSwitches(this.seenSwitches, page.subagents, first, this.startedAt)) {
      try {
        this.onSwitch?.(line);
      } catch {
        // a toast that cannot be shown is not worth more
      }
    }
  }

  /**
   * One page of parent's subagents: subagents.list (limit rows, from
   * cursor), or from an older observer its sessions.list entries as rows
   * (running first, then newest). undefined when the observer cannot say.
   */
  async fetchPage(parent: string, limit: number, cursor?: string): Promise<SubagentPage | undefined> {
    const s = this.sidecar;
    if (!s) return undefined;
    if (!this.legacy) {
      this.requests++;
      const r = await s.request("subagents.list" as never, { sessionID: parent, limit, ...(cursor ? { cursor } : {}) } as never, 2000);
      if (r.ok) {
        const res = r.result as Partial<SubagentPage> | undefined;
        const rows = Array.isArray(res?.subagents) ? res.subagents.filter((x) => x && typeof x === "object" && typeof x.sessionID === "string") : [];
        const page = { parent: res?.parent && typeof res.parent === "object" ? res.parent : undefined, subagents: rows, next: typeof res?.next === "string" ? res.next : undefined };
        // No subagent records (a state file from before they were kept):
        // the aliases it holds, if any.
        if (rows.length > 0 || cursor) return page;
        const old = await this.entryPage(s, parent, limit);
        return old && old.subagents.length > 0 ? { ...old, parent: { ...page.parent, ...old.parent }, fromEntries: true } : page;
      }
      // -32601 method not found; -32004 an observer that serves no such method.
      if (r.reason !== "error" || (r.code !== -32601 && r.code !== -32004)) return undefined;
      this.legacy = true;
    }
    if (cursor) return undefined;
    return this.entryPage(s, parent, limit);
  }

  /** sessions.list's aliases of parent as a page of rows (running first, then newest use). */
  private async entryPage(s: Sidecar, parent: string, limit: number): Promise<SubagentPage | undefined> {
    this.requests++;
    const l = await s.request("sessions.list", { sessionID: parent } as never, 2000);
    if (!l.ok || !Array.isArray(l.result)) return undefined;
    const rows = (l.result as SectionEntry[]).map(rowOfEntry);
    const active = (r: SubagentRow) => r.state === "running" || r.state === "retrying";
    const ordered = [...rows.filter(active), ...rows.filter((r) => !active(r))];
    return { subagents: ordered.slice(0, limit), next: ordered.length > limit ? "more" : undefined, parent: { subagents: rows.length, running: rows.filter(active).length }, fromEntries: true };
  }

  /** Every subagent of parent, read now for a command (bounded: COMMAND_PAGES pages of COMMAND_LIMIT rows). */
  async listNow(parent: string): Promise<SubagentRow[] | undefined> {
    const s = this.sidecar;
    if (!s || !(await s.whenReady(3000))) return undefined;
    const out: SubagentRow[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < COMMAND_PAGES; i++) {
      const page = await this.fetchPage(parent, COMMAND_LIMIT, cursor);
      if (!page) return i === 0 ? undefined : out;
      out.push(...page.subagents);
      if (!page.next || this.legacy) break;
      cursor = page.next;
    }
    return out;
  }

  /** Marks parent as on screen (asked for now, and on its changes) until the returned function is called. */
  show(parent: string): () => void {
    this.shown.set(parent, (this.shown.get(parent) ?? 0) + 1);
    if (!this.pages.has(parent)) {
      this.dirty.add(parent);
      this.schedule(0);
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = (this.shown.get(parent) ?? 1) - 1;
      if (n > 0) this.shown.set(parent, n);
      else {
        this.shown.delete(parent);
        this.pages.delete(parent); // not on screen: not kept
      }
    };
  }

  page(parent: string): SubagentPage | undefined {
    return this.pages.get(parent);
  }

  /** The config warnings the observer reported (a typo'd option with its did-you-mean). */
  get configWarnings(): string[] {
    return this.log.configWarnings;
  }

  /** Calls fn after each change of what the section shows; returns the unsubscribe. */
  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private setObserver(o: ObserverState): void {
    this.observer = o;
    this.emit();
  }

  private emit(): void {
    for (const fn of [...this.listeners]) {
      try {
        fn();
      } catch {
        // one view's failure is not another's
      }
    }
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    clearTimeout(this.flushTimer);
    clearTimeout(this.restartTimer);
    this.listeners.clear();
    const s = this.sidecar;
    this.sidecar = undefined;
    if (s) await stopTracked(s);
  }
}

/** A view of the section for one session: its lines, and its parent marked as shown while mounted. */
export class SectionView {
  private unshow?: () => void;
  private parent?: string;

  constructor(
    private readonly data: SectionData,
    private readonly host: SectionHost,
    private readonly warnings: string[],
    private readonly sessionID: () => string,
  ) {}

  /** The lines now (at most MAX_LINES, each safe and cut to the width). */
  lines(now = Date.now()): string[] {
    const sessionID = this.sessionID();
    const parentID = sessionID ? this.host.parentOf(sessionID) : undefined;
    const listed = parentID ?? sessionID;
    if (listed !== this.parent) {
      this.unshow?.();
      this.unshow = listed ? this.data.show(listed) : undefined;
      this.parent = listed;
    }
    return sectionLines({
      observer: this.data.observer,
      sessionID,
      parentID,
      page: listed ? this.data.page(listed) : undefined,
      cache: this.data.cache,
      warnings: [...this.warnings, ...this.data.configWarnings],
      stateProblem: this.data.stateProblem || undefined,
      now,
      contextLimit: this.host.contextLimit,
    });
  }

  /** Whether a time on screen moves (a running subagent's elapsed time). */
  ticking(): boolean {
    return this.data.observer.kind === "ready" && !!this.parent && needsClock(this.data.page(this.parent));
  }

  subscribe(fn: () => void): () => void {
    return this.data.subscribe(fn);
  }

  close(): void {
    this.unshow?.();
    this.unshow = undefined;
    this.parent = undefined;
  }
}

/** The section's lines for the session a sidebar shows (one look, for tests and tools). */
export function linesFor(data: SectionData, host: SectionHost, warnings: string[], sessionID: string): string[] {
  return new SectionView(data, host, warnings, () => sessionID).lines();
}

/** A row as a dialog option's title: alias, agent, state, label, safe and cut. */
function optionTitle(r: SubagentRow): string {
  const alias = safeText(r.alias);
  const parts = [alias ? `${alias}${r.resumable === false ? "*" : ""}` : "", safeText(r.agent), stateWord(r), safeText(r.label)].filter(Boolean);
  return screenLine(parts.join(" "), DIALOG_WIDTH);
}

/** The subagents of the session on screen's parent (or the session), read now; OpenCode's own list of children when the observer has none. */
async function rowsNow(data: SectionData, host: SectionHost, parent: string): Promise<SubagentRow[]> {
  const rows = await data.listNow(parent).catch(() => undefined);
  if (rows && rows.length > 0) return rows;
  if (!host.children) return rows ?? [];
  try {
    const kids = await host.children(parent);
    return kids.map((k) => {
      const running = host.running?.(k.id);
      return { sessionID: k.id, parentID: parent, label: k.title, state: running === true ? "running" : running === false ? "done" : undefined };
    });
  } catch {
    return rows ?? [];
  }
}

function tell(host: SectionHost, variant: "info" | "warning" | "error", message: string): void {
  try {
    host.toast?.({ variant, message: screenLine(message, 200), duration: 5000 });
  } catch {
    // a toast that cannot be shown is not worth more
  }
}

/**
 * The jump command: the session's subagents read when it runs (at any
 * width, whether or not a section was drawn), from a child its parent too;
 * the chosen session opened.
 */
export async function runJump(data: SectionData, host: SectionHost): Promise<void> {
  try {
    const here = host.current?.();
    if (!here) return tell(host, "info", "hookwire: open a session first");
    const parent = host.parentOf(here);
    const rows = await rowsNow(data, host, parent ?? here);
    const options = [
      ...(parent ? [{ title: "↑ parent session", value: parent }] : []),
      ...rows.filter((r) => r.sessionID && r.sessionID !== here).map((r) => ({ title: optionTitle(r), value: r.sessionID })),
    ];
    if (options.length === 0) return tell(host, "info", "hookwire: this session has no subagents");
    const chosen = await host.select?.("hookwire: subagents", options);
    if (chosen) host.navigate?.(chosen);
  } catch {
    // never into OpenCode
  }
}

/** The stop command: the running subagents read when it runs; the chosen one stopped through OpenCode's own call. */
export async function runStop(data: SectionData, host: SectionHost): Promise<void> {
  try {
    const here = host.current?.();
    if (!here) return tell(host, "info", "hookwire: open a session first");
    if (!host.abort) return tell(host, "warning", "hookwire: this OpenCode offers no call to stop a session");
    const parent = host.parentOf(here) ?? here;
    const rows = await rowsNow(data, host, parent);
    const running = rows.filter((r) => r.state === "running" || r.state === "retrying" || (r.state === undefined && host.running?.(r.sessionID) === true));
    if (running.length === 0) return tell(host, "info", "hookwire: no subagent is running");
    const chosen = await host.select?.("hookwire: stop a running subagent", running.map((r) => ({ title: optionTitle(r), value: r.sessionID })));
    if (!chosen) return;
    const row = running.find((r) => r.sessionID === chosen);
    await host.abort(chosen);
    tell(host, "info", `hookwire: stopping ${safeText(row?.alias) || safeText(row?.agent) || "the subagent"}`);
  } catch (err) {
    tell(host, "error", `hookwire: could not stop it (${err instanceof Error ? err.message : String(err)})`);
  }
}

const JUMP = { id: "hookwire.jump", title: "hookwire: open a subagent by its alias" };
const STOP = { id: "hookwire.stop", title: "hookwire: stop a running subagent" };

// --- elements (@opentui/solid without JSX: the package ships compiled JS) ---

function el(tag: string, props: Record<string, unknown>, children: unknown[] = []): unknown {
  const node = createElement(tag);
  for (const [k, v] of Object.entries(props)) if (v !== undefined) setProp(node, k, v);
  for (const c of children) if (c !== null && c !== undefined) insert(node, c as never);
  return node;
}

/** Work done, for tests: the section's redraws (each builds its lines). */
export const stats = { draws: 0 };

function setText(node: unknown, text: string): void {
  insert(node as never, null as never);
  insert(node as never, [text] as never);
}

/**
 * The section's element: a column of MAX_LINES text nodes made once, one
 * a line (a line is cut to the sidebar's width, so none wraps), the unused
 * ones hidden; redrawn when the data changed (and once a second while a
 * time on screen moves), only the lines that changed.
 */
function sectionElement(view: SectionView, fg?: unknown): unknown {
  const nodes = Array.from({ length: MAX_LINES }, () => el("text", { fg, visible: false, width: "100%", flexShrink: 0 }, [""]));
  const root = el("box", { flexDirection: "column", width: "100%" }, nodes);
  const shown: Array<string | undefined> = [];
  const draw = () => {
    try {
      stats.draws++;
      const next = view.lines();
      for (let i = 0; i < MAX_LINES; i++) {
        const line = next[i];
        if (line === shown[i]) continue;
        if (line === undefined) setProp(nodes[i], "visible", false);
        else {
          setText(nodes[i], line);
          if (shown[i] === undefined) setProp(nodes[i], "visible", true);
        }
        shown[i] = line;
      }
    } catch {
      // a bad frame is skipped
    }
  };
  let clock: NodeJS.Timeout | undefined;
  const sync = () => {
    draw();
    const want = view.ticking();
    if (want && !clock) {
      clock = setInterval(draw, 1000);
      clock.unref?.();
    } else if (!want && clock) {
      clearInterval(clock);
      clock = undefined;
    }
  };
  const unsubscribe = view.subscribe(sync);
  sync();
  onCleanup(() => {
    unsubscribe();
    if (clock) clearInterval(clock);
    view.close();
  });
  return root;
}

/**
 * Toasts the start-up warnings (the shim's and the config's the observer
 * judged) once, when the TUI is ready (a toast sent while plugins load is
 * dropped) and the observer has judged the config (or gave up).
 */
function toastWhenReady(toast: ((message: string) => void) | undefined, data: SectionData, warnings: string[], ready: () => boolean): void {
  if (!toast) return;
  const started = Date.now();
  const tick = () => {
    const waiting = !ready() || data.observer.kind === "starting";
    if (waiting && Date.now() - started < 60_000) {
      setTimeout(tick, 250).unref?.();
      return;
    }
    const all = [...warnings, ...data.configWarnings];
    if (all.length === 0) return;
    try {
      toast(all.map((w) => screenLine(w, 400)).join("\n"));
    } catch {
      // a toast that cannot be shown is not worth more
    }
  };
  // After the first frame as well: the ready flag can be set before the toast layer mounts.
  setTimeout(tick, 1500).unref?.();
}

/** The session ID and parent an OpenCode event is about ({sessionID} or {info: {id, parentID}} or {info: {sessionID}}), under `properties` (1.x) or `data` (2.x). */
function eventSession(ev: unknown): { sessionID?: string; parentID?: string } {
  const e = ev as { properties?: Record<string, unknown>; data?: Record<string, unknown> } | undefined;
  const p = (e?.properties ?? e?.data ?? {}) as { sessionID?: unknown; info?: { id?: unknown; sessionID?: unknown; parentID?: unknown } };
  const str = (x: unknown) => (typeof x === "string" && x ? x : undefined);
  return { sessionID: str(p.sessionID) ?? str(p.info?.sessionID) ?? str(p.info?.id), parentID: str(p.info?.parentID) };
}

/** OpenCode 1.x's events that change what the section shows (the server part's event hook sees the same). */
const EVENTS_1X = ["session.created", "session.deleted", "session.status", "session.idle", "session.error", "message.updated"];
/** OpenCode 2's (2.2 moved execution state to session.execution.*). */
const EVENTS_2X = [
  "session.created",
  "session.deleted",
  "session.execution.started",
  "session.execution.succeeded",
  "session.execution.failed",
  "session.execution.interrupted",
  "session.step.ended",
  "session.retry.scheduled",
  "session.model.selected",
];

/** Subscribes to OpenCode's events: one about a child of a parent on screen (or the parent) asks again. Returns the unsubscribes. */
function followEvents(on: ((type: string, fn: (ev: unknown) => void) => unknown) | undefined, types: string[], data: SectionData, host: SectionHost): Array<() => void> {
  const offs: Array<() => void> = [];
  if (typeof on !== "function") return offs;
  for (const type of types) {
    try {
      const off = on(type, (ev) => {
        try {
          const { sessionID, parentID } = eventSession(ev);
          data.sessionEvent(sessionID, parentID ?? (sessionID ? host.parentOf(sessionID) : undefined));
        } catch {
          // never into OpenCode
        }
      });
      if (typeof off === "function") offs.push(off as () => void);
    } catch {
      // an event this OpenCode does not have
    }
  }
  return offs;
}

/**
 * The section of a project dir whose server part has options: the
 * start-up problems the shim reports for them, and the data (its observer
 * not started yet).
 */
function sectionFor(options: unknown, dir: string): { warnings: string[]; data: SectionData } {
  const settings = resolveSettings(options, process.env, { directory: dir, worktree: dir } as never);
  return { warnings: startupWarnings(settings), data: new SectionData(settings, dir) };
}

// --- OpenCode 1.x ------------------------------------------------------------------

type TuiApi = {
  state?: {
    ready?: boolean;
    path?: { directory?: string };
    config?: { plugin?: unknown; plugins?: unknown };
    session?: { get?: (id: string) => { parentID?: string } | undefined; status?: (id: string) => { type?: string } | undefined };
    /** 1.18.33: TuiState.provider, @opencode-ai/sdk/v2's Provider[] (models by id, each with limit.context). */
    provider?: ReadonlyArray<{ id?: string; models?: Record<string, { limit?: { context?: number } } | undefined> }>;
  };
  slots?: { register?: (plugin: unknown) => unknown };
  ui?: { toast?: (t: { variant?: string; title?: string; message: string; duration?: number }) => void; dialog?: { replace?: (render: () => unknown) => void; clear?: () => void }; DialogSelect?: (props: unknown) => unknown };
  route?: { navigate?: (name: string, params?: Record<string, unknown>) => void; readonly current?: { name: string; params?: Record<string, unknown> } };
  command?: { register?: (cb: () => unknown[]) => () => void };
  theme?: { current?: { textMuted?: unknown } };
  lifecycle?: { onDispose?: (fn: () => void | Promise<void>) => unknown };
  event?: { on?: (type: string, fn: (ev: unknown) => void) => () => void };
  /** @opencode-ai/sdk/v2's client (1.18.33: client.session.abort({sessionID}), client.session.children({sessionID})). */
  client?: { session?: { abort?: (p: { sessionID: string }) => Promise<unknown>; children?: (p: { sessionID: string }) => Promise<{ data?: unknown } | undefined> } };
};

/** The context window of "provider/model" among OpenCode 1.x's providers (the model id may hold slashes), else undefined. */
export function contextLimitOf(providers: unknown, model: string): number | undefined {
  if (!Array.isArray(providers)) return undefined;
  const slash = model.indexOf("/");
  if (slash <= 0) return undefined;
  const list = providers as ReadonlyArray<{ id?: unknown; models?: Record<string, { limit?: { context?: unknown } } | undefined> } | undefined>;
  const provider = list.find((p) => p?.id === model.slice(0, slash));
  const n = provider?.models?.[model.slice(slash + 1)]?.limit?.context;
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** The session the TUI shows now, from its route. */
function currentSession(api: TuiApi): string | undefined {
  const r = api.route?.current;
  const id = r?.name === "session" ? r.params?.sessionID : undefined;
  return typeof id === "string" ? id : undefined;
}

/** OpenCode 1.x's part of SectionHost. */
function hostOf1x(api: TuiApi): SectionHost {
  const session = api.client?.session;
  return {
    parentOf: (id) => api.state?.session?.get?.(id)?.parentID || undefined,
    current: () => currentSession(api),
    contextLimit: (model) => contextLimitOf(api.state?.provider, model),
    children: session?.children
      ? async (id) => {
          const r = await session.children!({ sessionID: id });
          const list = Array.isArray(r?.data) ? (r.data as Array<{ id?: unknown; title?: unknown }>) : [];
          return list.filter((s) => typeof s?.id === "string").map((s) => ({ id: s.id as string, title: typeof s.title === "string" ? s.title : undefined }));
        }
      : undefined,
    running: (id) => {
      const t = api.state?.session?.status?.(id)?.type;
      return t === undefined ? undefined : t === "busy" || t === "retry";
    },
    // 1.18.33: @opencode-ai/sdk/v2 gen/sdk.gen.d.ts, Session.abort({sessionID}) ("Abort an active session").
    abort: session?.abort
      ? async (id) => {
          const r = (await session.abort!({ sessionID: id })) as { error?: unknown } | undefined;
          if (r && r.error) throw new Error(typeof r.error === "string" ? r.error : JSON.stringify(r.error).slice(0, 200));
        }
      : undefined,
    toast: (t) => api.ui?.toast?.({ ...t, title: "hookwire" }),
    select: (title, options) => {
      if (typeof api.ui?.dialog?.replace !== "function" || typeof api.ui.DialogSelect !== "function") return;
      return new Promise<string | undefined>((resolve) => {
        api.ui!.dialog!.replace!(() =>
          api.ui!.DialogSelect!({
            title,
            options,
            onSelect: (o: { value: string }) => {
              api.ui?.dialog?.clear?.();
              resolve(o.value);
            },
          }),
        );
      });
    },
    navigate: (id) => api.route?.navigate?.("session", { sessionID: id }),
  };
}

/** The palette commands (at any width: the palette does not need the sidebar). */
function registerCommands(api: TuiApi, data: SectionData, host: SectionHost): void {
  if (typeof api.command?.register !== "function") return;
  const dispose = api.command.register(() => [
    { title: JUMP.title, value: JUMP.id, category: "hookwire", onSelect: () => void runJump(data, host) },
    { title: STOP.title, value: STOP.id, category: "hookwire", onSelect: () => void runStop(data, host) },
  ]);
  api.lifecycle?.onDispose?.(() => dispose?.());
}

async function tui(api: TuiApi, options?: Record<string, unknown>): Promise<void> {
  try {
    const dir = api.state?.path?.directory || process.cwd();
    const fromServer = serverOptions(api.state?.config?.plugin) ?? serverOptions(api.state?.config?.plugins);
    const { warnings, data } = sectionFor(fromServer ?? options, dir);
    const host = hostOf1x(api);
    data.start();
    const offs = followEvents(api.event?.on, EVENTS_1X, data, host);
    api.lifecycle?.onDispose?.(async () => {
      for (const off of offs) off();
      await data.dispose();
    });
    api.slots?.register?.({
      order: 150,
      slots: {
        sidebar_content(_ctx: unknown, props: { session_id?: string } | undefined) {
          const view = new SectionView(data, host, warnings, () => props?.session_id ?? currentSession(api) ?? "");
          return sectionElement(view, api.theme?.current?.textMuted);
        },
      },
    });
    registerCommands(api, data, host);
    toastWhenReady(
      api.ui?.toast ? (message) => api.ui!.toast!({ variant: "warning", title: "hookwire", message, duration: 10_000 }) : undefined,
      data,
      warnings,
      () => api.state?.ready !== false,
    );
  } catch {
    // The TUI entry never throws into OpenCode.
  }
}

// --- OpenCode 2 ----------------------------------------------------------------------

/** The parts of OpenCode 2's TUI Context the section uses (packages/plugin/src/tui/context.ts @ 003e53fb: Context, UI, Data, SlotClaim, Keymap). */
type V2TuiContext = {
  options?: Record<string, unknown>;
  location?: { directory?: string };
  ui?: {
    /** Claims a place in the slot tree; returns its dispose. */
    slot?: (claim: { append: string; render: (input: { sessionID?: string }) => unknown }) => () => void;
    toast?: { show?: (o: { title?: string; message: string; variant?: string; duration?: number }) => void };
    dialog?: { select?: (o: { title: string; options: Array<{ title: string; value: string }> }) => Promise<string | undefined> };
    router?: { navigate?: (d: { type: "session"; sessionID: string }) => void; current?: () => { type: string; sessionID?: string } };
  };
  data?: {
    on?: (type: string, fn: (ev: unknown) => void) => () => void;
    session?: { get?: (id: string) => { parentID?: string } | undefined; list?: () => Array<{ id?: string; parentID?: string; title?: string }>; status?: (id: string) => "idle" | "running" };
  };
  keymap?: { layer?: (input: () => { commands?: Array<{ id?: string; title?: string; group?: string; palette?: true; run: () => void | Promise<void> }> }) => void };
  /** OpenCodeClient: session.interrupt({sessionID}) (packages/client/src/promise/generated/client.ts @ 01b31469: POST /api/session/{id}/interrupt). */
  client?: { session?: { interrupt?: (p: { sessionID: string }) => Promise<unknown> } };
};

/** OpenCode 2's part of SectionHost. */
function hostOf2x(ctx: V2TuiContext): SectionHost {
  const safe = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch {
      return undefined;
    }
  };
  const interrupt = ctx.client?.session?.interrupt;
  return {
    parentOf: (id) => safe(() => ctx.data?.session?.get?.(id)?.parentID) || undefined,
    current: () => {
      const r = safe(() => ctx.ui?.router?.current?.());
      return r?.type === "session" && typeof r.sessionID === "string" ? r.sessionID : undefined;
    },
    children: ctx.data?.session?.list
      ? async (id) => (safe(() => ctx.data!.session!.list!()) ?? []).filter((s) => s?.parentID === id && typeof s.id === "string").map((s) => ({ id: s.id as string, title: s.title }))
      : undefined,
    running: (id) => {
      const st = safe(() => ctx.data?.session?.status?.(id));
      return st === undefined ? undefined : st === "running";
    },
    abort: interrupt
      ? async (id) => {
          await interrupt.call(ctx.client!.session, { sessionID: id });
        }
      : undefined,
    toast: (t) => ctx.ui?.toast?.show?.({ ...t, title: "hookwire" }),
    select: (title, options) => ctx.ui?.dialog?.select?.({ title, options }),
    navigate: (id) => ctx.ui?.router?.navigate?.({ type: "session", sessionID: id }),
  };
}

/**
 * OpenCode 2's TUI: `setup(ctx)` appends the section to the
 * `sidebar.content` slot (`ctx.ui.slot({append, render})`, its input
 * `{sessionID}`); the commands are a keymap layer registered once, inside
 * an `app` slot claim (a layer needs a Solid owner; the sidebar's render
 * runs per session shown); a session's parent is its `parentID` in
 * `ctx.data.session.get`. Returns the cleanup.
 */
async function setup(ctx: V2TuiContext): Promise<() => Promise<void>> {
  try {
    const dir = ctx.location?.directory || process.cwd();
    const { warnings, data } = sectionFor(ctx.options, dir);
    const host = hostOf2x(ctx);
    // A model switch is news on OpenCode 2, where the server part has no
    // client to toast with (on 1.x it toasts the switch itself).
    data.onSwitch = (line) => host.toast?.({ variant: "info", message: screenLine(line, 200), duration: 6_000 });
    data.start();
    const offs = followEvents(ctx.data?.on, EVENTS_2X, data, host);
    const unapp = ctx.ui?.slot?.({
      append: "app",
      render: () => {
        try {
          ctx.keymap?.layer?.(() => ({
            commands: [
              { ...JUMP, group: "hookwire", palette: true, run: () => runJump(data, host) },
              { ...STOP, group: "hookwire", palette: true, run: () => runStop(data, host) },
            ],
          }));
        } catch {
          // no keymap: the section still draws
        }
        return null;
      },
    });
    const unslot = ctx.ui?.slot?.({
      append: "sidebar.content",
      render: (input) => sectionElement(new SectionView(data, host, warnings, () => input?.sessionID ?? "")),
    });
    toastWhenReady(
      ctx.ui?.toast?.show ? (message) => ctx.ui!.toast!.show!({ variant: "warning", title: "hookwire", message, duration: 10_000 }) : undefined,
      data,
      warnings,
      () => true,
    );
    return async () => {
      for (const un of [unslot, unapp, ...offs]) {
        try {
          un?.();
        } catch {
          // the host drops it with the plugin
        }
      }
      await data.dispose();
    };
  } catch {
    return async () => {};
  }
}

const plugin = { id: "hookwire", tui, setup };

export default plugin;
