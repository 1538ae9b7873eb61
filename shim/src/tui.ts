// The package's `./tui` entry: hookwire's section in OpenCode's sidebar.
//
// OpenCode 1.x (TUI plugins, 1.18.33): the default export `{id, tui}`;
// `tui(api, options)` registers a `sidebar_content` slot
// (`@opencode-ai/plugin/tui`: TuiPluginModule, api.slots.register) whose
// elements are built with `@opentui/solid`'s createElement/insert/setProp
// (kept external: OpenCode hands the plugin its own copies). OpenCode 2:
// the same export's `setup(ctx)` appends to the `sidebar.content` slot
// (`ctx.ui.slot`). Both draw the same lines (tuimodel.ts).
//
// The data is the observer's (`hookwire observe`, PROTOCOL.md 9), the
// process the editors use: it reads the project's state database
// read-only, so the section is right under `opencode attach` too and is
// never a third copy of the state. The start-up problems are the shim's
// own checks (resolveSettings) over the server part's options as OpenCode
// passes them (api.state.config.plugin), shown while they last and
// toasted once the TUI is ready (a toast the server part sends at start is
// dropped). Nothing is written to the terminal; the render path reads
// memory only; nothing thrown reaches OpenCode.

import { createElement, insert, setProp } from "@opentui/solid";
import { onCleanup } from "solid-js";
import { resolveSettings, type ShimSettings } from "./options.js";
import { Logger } from "./log.js";
import { PROTOCOL_VERSION } from "./contract.gen.js";
import { Sidecar } from "./sidecar.js";
import { newSwitches, sectionLines, type ObserverState, type SectionCache, type SectionEntry } from "./tuimodel.js";
import { stateProblemOf } from "./tuistate.js";

/** The npm name whose server entry the TUI looks for in OpenCode's plugin list. */
const PACKAGE = "hookwire-opencode";
/** How often the observer is asked (a change shows within about this). */
const POLL_MS = 1000;

/** The server part's options from OpenCode's plugin list (`name` or `[name, options]`), when it names this package. */
export function serverOptions(plugins: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(plugins)) return undefined;
  for (const p of plugins) {
    const name = typeof p === "string" ? p : Array.isArray(p) && typeof p[0] === "string" ? p[0] : undefined;
    if (!name || !(name === PACKAGE || name.startsWith(`${PACKAGE}@`) || /[/\\]hookwire-opencode([/\\]|$)/.test(name))) continue;
    const o = Array.isArray(p) ? p[1] : undefined;
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
  override alert(kind: string, level: Parameters<Logger["alert"]>[1], message: string, extra?: Record<string, unknown>): void {
    const w = (extra as { warnings?: unknown } | undefined)?.warnings;
    if (kind === "config-warnings" && Array.isArray(w)) {
      this.configWarnings.splice(0, this.configWarnings.length, ...w.filter((x): x is string => typeof x === "string"));
    }
  }
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

/** The section's live data: one observer per TUI process, asked once a second for what is shown. */
export class SectionData {
  observer: ObserverState = { kind: "starting" };
  /** What keeps the sidecar from keeping aliases (memory only, read-only), "" when nothing. */
  stateProblem = "";
  private readonly log = new SectionLog();
  readonly cache = new Map<string, SectionCache>();
  private readonly entries = new Map<string, SectionEntry[]>();
  /** Parents whose entries are shown now (the sidebar's session, or a child's parent). */
  private readonly watched = new Map<string, number>();
  private sidecar?: Sidecar;
  private timer?: NodeJS.Timeout;
  private polling = false;
  /** The model switches already seen (newSwitches), and told of new ones: OpenCode 2's TUI toasts them (1.x's server part does). */
  private readonly seenSwitches = new Set<string>();
  private readonly startedAt = Date.now();
  onSwitch?: (line: string) => void;

  constructor(
    private readonly settings: ShimSettings,
    private readonly dir: string,
  ) {}

  start(): void {
    if (this.sidecar || this.timer) return;
    if (!this.settings.binary) {
      this.observer = { kind: "off", why: "no hookwire binary" };
      return;
    }
    const args = ["observe"];
    if (this.settings.state) args.push("--state", this.settings.state);
    else args.push("--project", this.dir);
    this.sidecar = new Sidecar({
      binary: this.settings.binary,
      args,
      env: process.env,
      // The server part's config, so the observer judges it as serve does.
      initParams: async () => ({ protocolVersion: PROTOCOL_VERSION, clientInfo: { name: "hookwire-opencode-tui", version: "" }, config: this.settings.config }),
      // Never the terminal: the TUI owns it.
      log: this.log,
      stderrFile: null,
      maxCrashes: 3,
    });
    this.sidecar.start();
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref?.();
    void this.poll();
  }

  /** Marks parent as shown (its entries are asked for at the next poll). */
  watch(parent: string): void {
    this.watched.set(parent, Date.now());
  }

  /** The config warnings the observer reported (a typo'd option with its did-you-mean). */
  get configWarnings(): string[] {
    return this.log.configWarnings;
  }

  entriesOf(parent: string): SectionEntry[] {
    return this.entries.get(parent) ?? [];
  }

  async poll(): Promise<void> {
    const s = this.sidecar;
    if (!s || this.polling) return;
    this.polling = true;
    try {
      if (s.state === "failed" || s.state === "stopped") {
        this.observer = { kind: "gone", why: "observer gone" };
        return;
      }
      const st = await s.request("status", {} as never, 2000);
      if (!st.ok) {
        if (s.state !== "ready") this.observer = this.observer.kind === "ready" ? { kind: "gone", why: "the observer is restarting" } : this.observer;
        return;
      }
      const r = st.result as { version?: string; observer?: { lastLoad?: string; file?: string }; cache?: { perSession?: SectionCache[] } };
      this.observer = { kind: "ready", version: r.version, lastLoad: r.observer?.lastLoad, file: r.observer?.file };
      this.stateProblem = await stateProblemOf(this.settings, r.observer?.file);
      this.cache.clear();
      for (const c of r.cache?.perSession ?? []) if (typeof c?.session === "string") this.cache.set(c.session, c);
      const now = Date.now();
      for (const [parent, at] of this.watched) {
        if (now - at > 10 * POLL_MS) {
          this.watched.delete(parent); // no longer on screen
          continue;
        }
        const l = await s.request("sessions.list", { sessionID: parent } as never, 2000);
        if (!l.ok || !Array.isArray(l.result)) continue;
        const first = !this.entries.has(parent);
        this.entries.set(parent, l.result as SectionEntry[]);
        for (const line of newSwitches(this.seenSwitches, l.result as SectionEntry[], first, this.startedAt)) {
          try {
            this.onSwitch?.(line);
          } catch {
            // a toast that cannot be shown is not worth more
          }
        }
      }
    } catch {
      // the next poll tries again
    } finally {
      this.polling = false;
    }
  }

  async dispose(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sidecar?.dispose().catch(() => {});
    this.sidecar = undefined;
  }
}

/** What the section needs of OpenCode's TUI, on either generation. */
export type SectionHost = {
  /** The session's parent, when it is a subagent's. */
  parentOf: (sessionID: string) => string | undefined;
};

/** The section's lines for the session a sidebar shows. */
export function linesFor(data: SectionData, host: SectionHost, warnings: string[], sessionID: string): string[] {
  const parentID = host.parentOf(sessionID);
  const listed = parentID ?? sessionID;
  data.watch(listed);
  const entries = data.entriesOf(listed);
  const all = [...warnings, ...data.configWarnings];
  return sectionLines({ observer: data.observer, sessionID, parentID, entries, cache: data.cache, warnings: all, stateProblem: data.stateProblem || undefined, expanded: entries.length <= 4 });
}

/**
 * The jump command's choices from session: its parent (from a subagent's
 * session), then the subagents listed under the parent (or the session
 * itself), each an alias, agent and label opening that child.
 */
export function jumpOptions(data: SectionData, host: SectionHost, session: string): Array<{ title: string; value: string }> {
  const parent = host.parentOf(session);
  return [
    ...(parent ? [{ title: "↑ parent session", value: parent }] : []),
    ...data
      .entriesOf(parent ?? session)
      .filter((e): e is SectionEntry & { taskId: string } => typeof e.taskId === "string")
      .map((e) => ({ title: `${e.alias} ${e.agent ?? ""} ${e.label ?? ""}`.trim(), value: e.taskId })),
  ];
}

// --- elements (@opentui/solid without JSX: the package ships compiled JS) ---

function el(tag: string, props: Record<string, unknown>, children: unknown[] = []): unknown {
  const node = createElement(tag);
  for (const [k, v] of Object.entries(props)) if (v !== undefined) setProp(node, k, v);
  for (const c of children) if (c !== null && c !== undefined) insert(node, c as never);
  return node;
}

/** The most lines the section draws (the rest are left out). */
const MAX_LINES = 24;

function setText(node: unknown, text: string): void {
  insert(node as never, null as never);
  insert(node as never, [text] as never);
}

/**
 * The section's element: a column of MAX_LINES text nodes made once, one
 * a line (a line is cut to the sidebar's width, so none wraps), the unused
 * ones hidden; redrawn from memory every half second while mounted, and
 * only the lines that changed.
 */
function sectionElement(lines: () => string[], fg?: unknown): unknown {
  const nodes = Array.from({ length: MAX_LINES }, () => el("text", { fg, visible: false, width: "100%", flexShrink: 0 }, [""]));
  const root = el("box", { flexDirection: "column", width: "100%" }, nodes);
  const shown: Array<string | undefined> = [];
  const draw = () => {
    try {
      const next = lines().slice(0, MAX_LINES);
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
  draw();
  const timer = setInterval(draw, 500);
  timer.unref?.();
  onCleanup(() => clearInterval(timer));
  return root;
}

// --- OpenCode 1.x ------------------------------------------------------------------

type TuiApi = {
  state?: { ready?: boolean; path?: { directory?: string }; config?: { plugin?: unknown }; session?: { get?: (id: string) => { parentID?: string } | undefined } };
  slots?: { register?: (plugin: unknown) => unknown };
  ui?: { toast?: (t: { variant?: string; title?: string; message: string; duration?: number }) => void; dialog?: { replace?: (render: () => unknown) => void; clear?: () => void }; DialogSelect?: (props: unknown) => unknown };
  route?: { navigate?: (name: string, params?: Record<string, unknown>) => void; readonly current?: { name: string; params?: Record<string, unknown> } };
  command?: { register?: (cb: () => unknown[]) => () => void };
  theme?: { current?: { textMuted?: unknown } };
  lifecycle?: { onDispose?: (fn: () => void | Promise<void>) => unknown };
};

/**
 * Toasts the start-up warnings once, when the TUI is ready (a toast sent
 * while plugins load is dropped) and the observer has judged the config
 * (or gave up).
 */
function toastWhenReady(api: TuiApi, data: SectionData, warnings: string[]): void {
  if (typeof api.ui?.toast !== "function") return;
  const started = Date.now();
  const tick = () => {
    const waiting = api.state?.ready === false || data.observer.kind === "starting";
    if (waiting && Date.now() - started < 60_000) {
      setTimeout(tick, 250).unref?.();
      return;
    }
    const all = [...warnings, ...data.configWarnings];
    if (all.length === 0) return;
    try {
      api.ui!.toast!({ variant: "warning", title: "hookwire", message: all.join("\n"), duration: 10_000 });
    } catch {
      // a toast that cannot be shown is not worth more
    }
  };
  // After the first frame as well: the ready flag can be set before the toast layer mounts.
  setTimeout(tick, 1500).unref?.();
}

/** The session the TUI shows now, from its route. */
function currentSession(api: TuiApi): string | undefined {
  const r = api.route?.current;
  const id = r?.name === "session" ? r.params?.sessionID : undefined;
  return typeof id === "string" ? id : undefined;
}

/** The palette command that lists the session's aliases and opens the chosen child (from a child: back to its parent). */
function registerJump(api: TuiApi, data: SectionData, host: SectionHost): void {
  if (typeof api.command?.register !== "function") return;
  const dispose = api.command.register(() => [
    {
      title: "hookwire: open a subagent by its alias",
      value: "hookwire.jump",
      category: "hookwire",
      onSelect: () => {
        try {
          const here = currentSession(api);
          if (!here) return;
          const options = jumpOptions(data, host, here);
          if (options.length === 0 || typeof api.ui?.dialog?.replace !== "function" || typeof api.ui.DialogSelect !== "function") return;
          api.ui.dialog.replace(() =>
            api.ui!.DialogSelect!({
              title: "hookwire: subagents",
              options,
              onSelect: (o: { value: string }) => {
                api.ui?.dialog?.clear?.();
                api.route?.navigate?.("session", { sessionID: o.value });
              },
            }),
          );
        } catch {
          // never into OpenCode
        }
      },
    },
  ]);
  api.lifecycle?.onDispose?.(() => dispose?.());
}

async function tui(api: TuiApi, options?: Record<string, unknown>): Promise<void> {
  try {
    const dir = api.state?.path?.directory || process.cwd();
    const fromServer = serverOptions(api.state?.config?.plugin);
    const { warnings, data } = sectionFor(fromServer ?? options, dir);
    const host: SectionHost = { parentOf: (id) => api.state?.session?.get?.(id)?.parentID || undefined };
    data.start();
    api.lifecycle?.onDispose?.(() => data.dispose());
    api.slots?.register?.({
      order: 150,
      slots: {
        sidebar_content(_ctx: unknown, props: { session_id?: string } | undefined) {
          const id = props?.session_id ?? currentSession(api) ?? "";
          return sectionElement(() => linesFor(data, host, warnings, id), api.theme?.current?.textMuted);
        },
      },
    });
    registerJump(api, data, host);
    toastWhenReady(api, data, warnings);
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
    router?: { navigate?: (d: { type: "session"; sessionID: string }) => void };
  };
  data?: { session?: { get?: (id: string) => { parentID?: string } | undefined } };
  keymap?: { layer?: (input: () => { commands?: Array<{ id?: string; title?: string; group?: string; palette?: true; run: () => void | Promise<void> }> }) => void };
};

/**
 * OpenCode 2's TUI: `setup(ctx)` appends the section to the
 * `sidebar.content` slot (`ctx.ui.slot({append, render})`, its input
 * `{sessionID}`); a session's parent is its `parentID` in
 * `ctx.data.session.get`; the jump command is a palette command of a
 * keymap layer the section owns, a `ctx.ui.dialog.select` of the aliases
 * that navigates to the chosen session. Returns the cleanup.
 */
async function setup(ctx: V2TuiContext): Promise<() => Promise<void>> {
  try {
    const dir = ctx.location?.directory || process.cwd();
    const { warnings, data } = sectionFor(ctx.options, dir);
    const host: SectionHost = {
      parentOf: (id) => {
        try {
          return ctx.data?.session?.get?.(id)?.parentID || undefined;
        } catch {
          return undefined;
        }
      },
    };
    // A model switch is news on OpenCode 2, where the server part has no
    // client to toast with (on 1.x it toasts the switch itself).
    data.onSwitch = (line) => ctx.ui?.toast?.show?.({ variant: "info", title: "hookwire", message: line, duration: 6_000 });
    data.start();
    const unslot = ctx.ui?.slot?.({
      append: "sidebar.content",
      render: (input) => {
        const id = input?.sessionID ?? "";
        try {
          ctx.keymap?.layer?.(() => ({
            commands: [
              {
                id: "hookwire.jump",
                title: "hookwire: open a subagent by its alias",
                group: "hookwire",
                palette: true,
                run: async () => {
                  try {
                    const options = jumpOptions(data, host, id);
                    const chosen = await ctx.ui?.dialog?.select?.({ title: "hookwire: subagents", options });
                    if (chosen) ctx.ui?.router?.navigate?.({ type: "session", sessionID: chosen });
                  } catch {
                    // never into OpenCode
                  }
                },
              },
            ],
          }));
        } catch {
          // no keymap: the section still draws
        }
        return sectionElement(() => linesFor(data, host, warnings, id));
      },
    });
    if (warnings.length > 0) {
      try {
        ctx.ui?.toast?.show?.({ variant: "warning", title: "hookwire", message: warnings.join("\n"), duration: 10_000 });
      } catch {
        // no toast
      }
    }
    return async () => {
      try {
        unslot?.();
      } catch {
        // the host drops it with the plugin
      }
      await data.dispose();
    };
  } catch {
    return async () => {};
  }
}

const plugin = { id: "hookwire", tui, setup };

export default plugin;
