// The hookwire section of OpenCode's sidebar (the TUI entry, tui.ts), as
// text: what each state shows, computed from the observer's answers
// (PROTOCOL.md 9: `status` and `sessions.list`, the data the editors
// use), what OpenCode's TUI knows of the session, and the start-up
// problems the shim would report. Pure: no IO, no OpenCode types, so the
// same lines are tested here and drawn on both OpenCode generations.

/**
 * The columns a sidebar line has: the sidebar is 42 wide (OpenCode
 * 1.18.33) and its content about 38 inside its padding (measured on the
 * screen: a 42-column line wrapped after 38); two more are kept free. Lines
 * are cut to fit. Only marks of one column each (no ambiguous-width
 * symbols, which some terminals draw two columns wide).
 */
export const SIDEBAR_WIDTH = 36;

/** A subagent entry as sessions.list answers it (SessionEntry). */
export type SectionEntry = {
  parent?: string;
  agent?: string;
  alias?: string;
  taskId?: string;
  label?: string;
  run?: { state?: string; error?: string };
  model?: { model?: string };
  switches?: Array<{ from?: string; to?: string; reason?: string; at?: string; pending?: boolean }>;
};

/** How many switches newSwitches remembers as seen. */
export const MAX_SEEN_SWITCHES = 4096;

/**
 * The model switches among entries not in seen, as a line each for a toast
 * ("exp-1: fake/primary-model failed (rate-limit: ...); now on
 * fake/fallback-model"), the oldest first; each is added to seen. With
 * quiet (the first look at a parent), they are only added: what happened
 * before the TUI looked is history, not news; so is a switch made before
 * since (epoch ms), whenever it is first seen. seen keeps at most
 * MAX_SEEN_SWITCHES keys (the oldest go first).
 */
export function newSwitches(seen: Set<string>, entries: SectionEntry[], quiet: boolean, since = 0): string[] {
  const out: string[] = [];
  for (const e of [...entries].reverse()) {
    for (const sw of e.switches ?? []) {
      // A pending switch (asked for, not seen applied: PROTOCOL.md 4.8) is news again once it applied.
      const key = `${e.parent ?? ""}\u0000${e.taskId ?? e.alias ?? ""}\u0000${sw.from ?? ""}\u0000${sw.to ?? ""}\u0000${sw.at ?? ""}${sw.pending ? "\u0000pending" : ""}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (seen.size > MAX_SEEN_SWITCHES) seen.delete(seen.values().next().value as string);
      const at = sw.at ? Date.parse(sw.at) : NaN;
      if (quiet || !sw.to || at < since) continue;
      const reason = sw.reason ? ` (${sw.reason})` : "";
      out.push(`${e.alias || e.taskId || "a subagent"}: ${sw.from || "its model"} failed${reason}; ${sw.pending ? "switching to" : "now on"} ${sw.to}`);
    }
  }
  return out;
}

/** A session's prompt-cache figures (CacheSummary). */
export type SectionCache = { session?: string; cacheShare?: number | null; noCacheFigures?: boolean; busts?: number; requests?: number };

/** Where the section's data comes from. */
export type ObserverState =
  | { kind: "starting" }
  | { kind: "ready"; version?: string; lastLoad?: string; file?: string }
  // (the head line says working once the project holds an alias or figures, idle before)
  | { kind: "gone"; why: string }
  | { kind: "off"; why: string };

export type SectionInput = {
  observer: ObserverState;
  /** The session the sidebar shows. */
  sessionID: string;
  /** Its parent, when it is a subagent's session (OpenCode's session info). */
  parentID?: string;
  /** The entries under the parent of the view: the session's own subagents, or its siblings in a child's view. */
  entries: SectionEntry[];
  /** Prompt-cache figures by session. */
  cache: Map<string, SectionCache>;
  /** Start-up problems the shim reports (option typos, binary not found, ...), newest last. */
  warnings: string[];
  /** The sidecar's state-file problem, when one is known (memory-only, read-only). */
  stateProblem?: string;
  /** Whether details are shown (labels, models, cache per subagent). */
  expanded?: boolean;
};

/** A line cut to the sidebar's width (an ellipsis marks the cut). */
export function fit(line: string, width = SIDEBAR_WIDTH): string {
  const chars = [...line];
  return chars.length <= width ? line : chars.slice(0, width - 1).join("") + "…";
}

/** The state word of an entry's run: running, done, failed or cancelled. */
export function runWord(run: SectionEntry["run"]): string {
  switch (run?.state) {
    case "running":
      return "running";
    case "completed":
      return "done";
    case "error":
      return /cancel/i.test(run.error ?? "") ? "cancelled" : "failed";
    default:
      return run?.state ? run.state : "idle";
  }
}

const MARK: Record<string, string> = { running: "~", done: "✓", failed: "✗", cancelled: "-", idle: "." };

/** A model name without its provider, for the narrow column. */
function shortModel(m: string | undefined): string {
  if (!m) return "";
  const slash = m.indexOf("/");
  return slash >= 0 ? m.slice(slash + 1) : m;
}

/** A share as a whole percentage, rounded; short of all never 100, above none never 0. */
export function sharePercent(share: number): number {
  const p = Math.round(share * 100);
  if (p >= 100 && share < 1) return 99;
  if (p <= 0 && share > 0) return 1;
  return p;
}

/** A cache share and its busts, "cache 83% 1 bust"; "" without figures. */
export function cacheWords(c: SectionCache | undefined): string {
  if (!c || !c.requests) return "";
  const share = c.noCacheFigures || c.cacheShare === null || c.cacheShare === undefined ? "n/a" : `${sharePercent(c.cacheShare)}%`;
  const busts = c.busts ?? 0;
  return `cache ${share}${busts > 0 ? ` ${busts} bust${busts === 1 ? "" : "s"}` : ""}`;
}

/** hookwire's own line. */
function headLine(input: SectionInput): string {
  const o = input.observer;
  switch (o.kind) {
    case "starting":
      return "hookwire: starting";
    case "off":
      return `hookwire: off (${o.why})`;
    case "gone":
      return `hookwire: down (${o.why})`;
    case "ready": {
      // The release, without a development build's +commit suffix.
      const version = o.version ? ` ${o.version.split("+")[0]}` : "";
      if (input.stateProblem) return `hookwire${version}: ${input.stateProblem}`;
      if (o.lastLoad && o.lastLoad !== "ok" && o.lastLoad !== "missing") return `hookwire${version}: state ${o.lastLoad}`;
      // Idle until the project holds something of hookwire's work: an
      // alias or a request's prompt-cache figures.
      const busy = input.entries.length > 0 || input.cache.size > 0;
      return `hookwire${version}: ${busy ? "working" : "idle"}`;
    }
  }
}

/**
 * The section's lines for input. The parent's view lists its subagents,
 * newest first, an alias and state a line (label, model and fallback
 * switch, cache share under it when expanded); a child's view names its
 * alias, parent, model and switches. Warnings come first after the head
 * line, each cut to the width (the toast has them whole).
 */
export function sectionLines(input: SectionInput): string[] {
  const out: string[] = [headLine(input)];
  const n = input.warnings.length;
  if (n > 0) {
    out.push(`! ${n} warning${n === 1 ? "" : "s"}:`);
    // The option's name first (the toast has the whole text).
    for (const w of input.warnings.slice(-3)) out.push(`  ${w.replace(/^hookwire:\s*(config warnings:\s*)?/, "").replace(/^config\./, "")}`);
  }
  if (input.observer.kind !== "ready") return out.map((l) => fit(l));

  if (input.parentID) {
    const me = input.entries.find((e) => e.taskId === input.sessionID);
    out.push(me?.alias ? `subagent ${me.alias} (${me.agent ?? "?"}) ${runWord(me.run)}` : "subagent (no alias yet)");
    out.push(`parent ${input.parentID}`);
    const model = me?.model?.model;
    if (model) out.push(`model ${shortModel(model)}`);
    for (const s of me?.switches ?? []) {
      out.push(`  ${shortModel(s.from)} → ${shortModel(s.to)}: ${s.reason ?? ""}`);
      if (s.pending) out.push("  (switching: not applied yet)");
    }
    const c = cacheWords(input.cache.get(input.sessionID));
    if (c) out.push(c);
    return out.map((l) => fit(l));
  }

  const own = cacheWords(input.cache.get(input.sessionID));
  if (input.entries.length === 0) {
    out.push("no subagents yet");
  } else {
    out.push("subagents:");
    for (const e of input.entries) {
      const word = runWord(e.run);
      out.push(` ${MARK[word] ?? "·"} ${e.alias ?? "?"} ${word}${input.expanded ? "" : e.label ? ` ${e.label}` : ""}`);
      if (!input.expanded) continue;
      if (e.label) out.push(`   ${e.label}`);
      const last = e.switches?.at(-1);
      // A pending switch is not applied yet: the subagent is not on its model.
      const model = last && !last.pending ? last.to : e.model?.model;
      if (model) out.push(`   on ${shortModel(model)}`);
      if (last?.pending) out.push(`   switching to ${shortModel(last.to)}`);
      if (last?.from) out.push(`   ↪ from ${shortModel(last.from)}: ${(last.reason ?? "").split(":")[0]}`);
      const c = cacheWords(e.taskId ? input.cache.get(e.taskId) : undefined);
      if (c) out.push(`   ${c}`);
    }
  }
  if (own) out.push(`this session: ${own}`);
  return out.map((l) => fit(l));
}
