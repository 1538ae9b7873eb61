// The hookwire section of OpenCode's sidebar (the TUI entry, tui.ts), as
// text: what each state shows, computed from the observer's answers
// (PROTOCOL.md 9: `status` and `subagents.list`, the data the editors
// use), what OpenCode's TUI knows of the session, and the start-up
// problems the shim would report. Pure: no IO, no OpenCode types, so the
// same lines are tested here and drawn on both OpenCode generations.

import { cutToWidth, safeText, screenLine } from "./tuitext.js";

/**
 * The columns a sidebar line has: the sidebar is 42 wide (OpenCode
 * 1.18.33) and its content about 38 inside its padding (measured on the
 * screen: a 42-column line wrapped after 38); two more are kept free. Lines
 * are cut to fit. Only marks of one column each (no ambiguous-width
 * symbols, which some terminals draw two columns wide).
 */
export const SIDEBAR_WIDTH = 36;

/** The most lines the section draws; the lines built per redraw stay within it whatever the number of subagents. */
export const MAX_LINES = 24;

/** A subagent as subagents.list answers it (PROTOCOL.md 9; every string raw). */
export type SubagentRow = {
  sessionID: string;
  parentID?: string;
  depth?: number;
  alias?: string;
  resumable?: boolean;
  agent?: string;
  label?: string;
  state?: string;
  startedAt?: string;
  endedAt?: string;
  retry?: { attempt?: number; next?: string; message?: string };
  error?: string;
  model?: string;
  tokens?: TokenCounts;
  cost?: number;
  context?: { used?: number; limit?: number };
  cacheShare?: number | null;
  switches?: SwitchRecord[];
};

/** A fallback switch: its failure's class (rate-limit, overloaded, ...); an older sidecar gives a reason instead. */
export type SwitchRecord = { from?: string; to?: string; class?: string; reason?: string; at?: string; pending?: boolean };

/** Token counts as subagents.list gives them. */
export type TokenCounts = { input?: number; output?: number; reasoning?: number; cacheRead?: number; cacheWrite?: number };

/** The parent's figures: its own assistant messages, and its total with every descendant (tokens a count or their kinds). */
export type ParentFigures = {
  sessionID?: string;
  own?: { tokens?: number | TokenCounts; cost?: number };
  total?: { tokens?: number | TokenCounts; cost?: number };
  subagents?: number;
  running?: number;
};

/** One page of subagents.list. */
export type SubagentPage = {
  parent?: ParentFigures;
  subagents: SubagentRow[];
  next?: string;
  /** Made of an older observer's sessions.list entries (re-read on sessions.changed, which is all such an observer sends). */
  fromEntries?: true;
};

/** A subagent entry as an older observer's sessions.list answers it (SessionEntry), for the fallback when subagents.list is not served. */
export type SectionEntry = {
  parent?: string;
  agent?: string;
  alias?: string;
  taskId?: string;
  label?: string;
  lastUse?: string;
  run?: { state?: string; error?: string };
  model?: { model?: string };
  switches?: Array<{ from?: string; to?: string; reason?: string; at?: string; pending?: boolean }>;
};

/** The classes a failure can have (PROTOCOL.md 4.8). */
const CLASSES = ["rate-limit", "overloaded", "server-error", "quota", "missing-model", "auth", "context-length", "timeout", "network"];

/** A switch's class: its own, else the class its reason names ("rate-limit: ..." or "... (rate-limit: ...)"); never a "cooling until". */
export function switchClass(sw: SwitchRecord): string {
  if (sw.class) return safeText(sw.class);
  const r = sw.reason ?? "";
  for (const c of CLASSES) if (r.startsWith(`${c}:`) || r === c || r.includes(`(${c}:`) || r.includes(`(${c})`)) return c;
  if (/cooling until/i.test(r)) return "";
  return safeText(r.split(":")[0]);
}

/** An older observer's entry as a row (state words: completed is done, an error naming a cancel is cancelled). */
export function rowOfEntry(e: SectionEntry): SubagentRow {
  const st = e.run?.state;
  const state = st === "completed" ? "done" : st === "error" ? (/cancel|abort|interrupt/i.test(e.run?.error ?? "") ? "cancelled" : "failed") : st || undefined;
  // One switch per failure: a later one to the same model is the same failure's.
  const seen = new Set<string>();
  const switches: SwitchRecord[] = [];
  for (const sw of e.switches ?? []) {
    const k = `${sw.from}\u0000${sw.to}`;
    if (seen.has(k)) continue;
    seen.add(k);
    switches.push({ from: sw.from, to: sw.to, class: switchClass(sw), at: sw.at, ...(sw.pending ? { pending: true } : {}) });
  }
  return {
    sessionID: e.taskId ?? "",
    parentID: e.parent,
    alias: e.alias,
    agent: e.agent,
    label: e.label,
    state,
    error: state === "failed" ? e.run?.error : undefined,
    // A pending switch (PROTOCOL.md 4.8) is not applied: the subagent is still on its model.
    model: (e.switches?.at(-1)?.pending ? undefined : e.switches?.at(-1)?.to) ?? e.model?.model,
    switches,
  };
}

/** How many switches newSwitches remembers as seen. */
export const MAX_SEEN_SWITCHES = 4096;

/**
 * The model switches among rows not in seen, as a line each for a toast
 * ("exp-1: fake/primary-model failed (rate-limit); now on
 * fake/fallback-model"), made safe, the oldest first; each is added to
 * seen. With quiet (the first look at a parent), they are only added: what
 * happened before the TUI looked is history, not news; so is a switch made
 * before since (epoch ms), whenever it is first seen. seen keeps at most
 * MAX_SEEN_SWITCHES keys (the oldest go first).
 */
export function newSwitches(seen: Set<string>, rows: SubagentRow[], quiet: boolean, since = 0): string[] {
  const out: string[] = [];
  for (let i = rows.length - 1; i >= 0; i--) {
    const r = rows[i];
    for (const sw of r.switches ?? []) {
      // A pending switch (asked for, not seen applied: PROTOCOL.md 4.8) is news again once it applied.
      const key = `${r.parentID ?? ""}\u0000${r.sessionID}\u0000${sw.from ?? ""}\u0000${sw.to ?? ""}\u0000${sw.at ?? ""}${sw.pending ? "\u0000pending" : ""}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (seen.size > MAX_SEEN_SWITCHES) seen.delete(seen.values().next().value as string);
      const at = sw.at ? Date.parse(sw.at) : NaN;
      if (quiet || !sw.to || at < since) continue;
      const cls = switchClass(sw);
      const who = safeText(r.alias) || safeText(r.agent) || "a subagent";
      out.push(`${who}: ${safeText(sw.from) || "its model"} failed${cls ? ` (${cls})` : ""}; ${sw.pending ? "switching to" : "now on"} ${safeText(sw.to)}`);
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
  | { kind: "gone"; why: string }
  | { kind: "off"; why: string };

export type SectionInput = {
  observer: ObserverState;
  /** The session the sidebar shows. */
  sessionID: string;
  /** Its parent, when it is a subagent's session (OpenCode's session info). */
  parentID?: string;
  /** The first page of subagents under the parent of the view (the session's own, or its siblings in a child's view). */
  page?: SubagentPage;
  /** Prompt-cache figures by session (the session's own share). */
  cache: Map<string, SectionCache>;
  /** Start-up problems the shim reports (option typos, binary not found, ...), newest last. */
  warnings: string[];
  /** The sidecar's state-file problem, when one is known (memory-only, read-only). */
  stateProblem?: string;
  /** Now (epoch ms), for elapsed times. */
  now?: number;
  /** The most lines drawn (MAX_LINES). */
  maxLines?: number;
  /** Columns a line has (SIDEBAR_WIDTH). */
  width?: number;
  /**
   * The context window OpenCode knows for a model ("provider/model"), for a
   * row the sidecar gives none (it never knows the window: OpenCode's TUI
   * does, from its providers).
   */
  contextLimit?: (model: string) => number | undefined;
};

/** A line cut to the sidebar's width by display columns (an ellipsis marks the cut), made safe. */
export function fit(line: string, width = SIDEBAR_WIDTH): string {
  return screenLine(line, width);
}

/** The state word of a row: running, retrying, done, failed, cancelled. */
export function stateWord(row: SubagentRow | undefined): string {
  switch (row?.state) {
    case "running":
    case "retrying":
    case "done":
    case "failed":
    case "cancelled":
      return row.state;
    case "completed":
      return "done";
    case "error":
      return "failed";
    case "interrupted":
      return "interrupted";
    case "aborted":
      return "cancelled";
    default:
      return row?.state ? safeText(row.state) : "idle";
  }
}

const MARK: Record<string, string> = { running: "~", retrying: "↻", done: "✓", failed: "✗", cancelled: "-", interrupted: "-", idle: "." };

/** A model name without its provider, for the narrow column. */
function shortModel(m: string | undefined): string {
  const s = safeText(m);
  const slash = s.indexOf("/");
  return slash >= 0 ? s.slice(slash + 1) : s;
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

/** A token count, short: 960, 1.2k, 45k, 1.3M. */
export function tokenWords(n: number | undefined): string {
  if (typeof n !== "number" || !Number.isFinite(n) || n < 0) return "";
  if (n < 1000) return `${Math.round(n)}`;
  if (n < 10_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
}

/** A cost in dollars: four decimals under a dime (OpenCode's figures are that small), two above. */
export function costWords(c: number | undefined): string {
  if (typeof c !== "number" || !Number.isFinite(c) || c < 0) return "";
  if (c === 0) return "$0";
  return c < 0.1 ? `$${c.toFixed(4)}` : `$${c.toFixed(2)}`;
}

/** An elapsed time: 42s, 3m05s, 1h02m. */
export function elapsedWords(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) ms = 0;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

/** All of a figure's tokens (input, output, reasoning, cache read and write), or undefined. */
function tokenSum(t: number | TokenCounts | undefined): number | undefined {
  if (typeof t === "number") return t;
  if (!t || typeof t !== "object") return undefined;
  const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  return num(t.input) + num(t.output) + num(t.reasoning) + num(t.cacheRead) + num(t.cacheWrite);
}

function rowTokens(r: SubagentRow): number | undefined {
  return tokenSum(r.tokens);
}

/** The state with its detail: running 42s, retrying #2 in 9s, done 30s, failed: its reason, cancelled. */
function stateDetail(r: SubagentRow, now: number, short: boolean): string {
  const word = stateWord(r);
  const started = r.startedAt ? Date.parse(r.startedAt) : NaN;
  switch (word) {
    case "running":
      return Number.isFinite(started) ? (short ? elapsedWords(now - started) : `running ${elapsedWords(now - started)}`) : "running";
    case "retrying": {
      const n = r.retry?.attempt ? `#${r.retry.attempt}` : "";
      if (short) return `retry${n}`;
      const next = r.retry?.next ? Date.parse(r.retry.next) : NaN;
      return `retrying${n ? ` ${n}` : ""}${Number.isFinite(next) && next > now ? ` in ${elapsedWords(Math.ceil((next - now) / 1000) * 1000)}` : ""}`;
    }
    case "done": {
      const ended = r.endedAt ? Date.parse(r.endedAt) : NaN;
      return !short && Number.isFinite(started) && Number.isFinite(ended) ? `done ${elapsedWords(ended - started)}` : "done";
    }
    case "failed":
      return short || !r.error ? "failed" : `failed: ${safeText(r.error)}`;
    default:
      return word;
  }
}

/** A row's name: its alias (with * when the model can no longer resume it by alias) and agent. */
function rowName(r: SubagentRow): string {
  const alias = safeText(r.alias);
  const agent = safeText(r.agent);
  const a = alias ? `${alias}${r.resumable === false ? "*" : ""}` : "";
  return [a, agent].filter(Boolean).join(" ") || "subagent";
}

/** A row as one line: mark, name, short state, label. */
function compactLine(r: SubagentRow, now: number): string {
  const label = safeText(r.label);
  return ` ${MARK[stateWord(r)] ?? "·"} ${rowName(r)} ${stateDetail(r, now, true)}${label ? ` ${label}` : ""}`;
}

/** At most this many switches are drawn per row (the newest). */
const MAX_SWITCH_LINES = 2;

/** A row's detail lines under its first: label; model, tokens, cost; context and cache; each switch once with its class. */
function detailLines(r: SubagentRow, cache: Map<string, SectionCache>, indent: string, contextLimit?: SectionInput["contextLimit"]): string[] {
  const out: string[] = [];
  const label = safeText(r.label);
  if (label) out.push(`${indent}${label}`);
  // No figures yet (a subagent before its first answer): nothing rather than "0 tok $0".
  const tokens = rowTokens(r);
  const figures = [shortModel(r.model), tokens ? `${tokenWords(tokens)} tok` : "", tokens || r.cost ? costWords(r.cost) : ""].filter(Boolean);
  if (figures.length) out.push(`${indent}${figures.join(" ")}`);
  const limit = r.context?.limit || (r.context?.used && r.model ? windowOf(contextLimit, r.model) : undefined);
  const ctx = r.context?.used ? `ctx ${tokenWords(r.context.used)}${limit ? `/${tokenWords(limit)}` : ""}` : "";
  const share = typeof r.cacheShare === "number" && Number.isFinite(r.cacheShare) ? `cache ${sharePercent(r.cacheShare)}%` : cacheWords(cache.get(r.sessionID));
  const cc = [ctx, share].filter(Boolean).join(" ");
  if (cc) out.push(`${indent}${cc}`);
  const sws = r.switches ?? [];
  const seen = new Set<string>();
  const shown: string[] = [];
  for (let i = sws.length - 1; i >= 0 && shown.length < MAX_SWITCH_LINES; i--) {
    const sw = sws[i];
    const cls = switchClass(sw);
    const k = `${sw.from}\u0000${sw.to}\u0000${sw.at}`;
    if (seen.has(k)) continue;
    seen.add(k);
    // A pending switch is asked for, not applied: it says where it is going, not where it came from.
    shown.unshift(sw.pending ? `${indent}↪ switching to ${shortModel(sw.to)}${cls ? `: ${cls}` : ""}` : `${indent}↪ from ${shortModel(sw.from)}${cls ? `: ${cls}` : ""}`);
  }
  out.push(...shown);
  return out;
}

/** A model's context window from the host's lookup: a positive finite number, else undefined (a lookup that throws knows none). */
function windowOf(contextLimit: SectionInput["contextLimit"], model: string): number | undefined {
  try {
    const n = contextLimit?.(model);
    return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the lines hold a time that moves (a running subagent's elapsed time, a retry's countdown): the section then redraws once a second. */
export function needsClock(page: SubagentPage | undefined, maxRows = MAX_LINES): boolean {
  const rows = page?.subagents ?? [];
  for (let i = 0; i < rows.length && i < maxRows; i++) if (rows[i].state === "running" || rows[i].state === "retrying") return true;
  return false;
}

/** hookwire's own line. */
function headLine(input: SectionInput): string {
  const o = input.observer;
  switch (o.kind) {
    case "starting":
      return "hookwire: starting";
    case "off":
      return `hookwire: off (${safeText(o.why)})`;
    case "gone":
      return `hookwire: down (${safeText(o.why)})`;
    case "ready": {
      // The release, without a development build's +commit suffix.
      const version = o.version ? ` ${safeText(o.version.split("+")[0])}` : "";
      if (input.stateProblem) return `hookwire${version}: ${safeText(input.stateProblem)}`;
      if (o.lastLoad && o.lastLoad !== "ok" && o.lastLoad !== "missing") return `hookwire${version}: state ${safeText(o.lastLoad)}`;
      const running = runningCount(input.page);
      return `hookwire${version}: ${running > 0 ? `${running} running` : "idle"}`;
    }
  }
}

function runningCount(page: SubagentPage | undefined): number {
  if (typeof page?.parent?.running === "number") return page.parent.running;
  let n = 0;
  const rows = page?.subagents ?? [];
  for (let i = 0; i < rows.length && i < MAX_LINES; i++) if (rows[i].state === "running" || rows[i].state === "retrying") n++;
  return n;
}

/** The parent's figures as two labelled lines: "this session $x 4.5k tok", "with subagents $y 12k tok". */
function parentLines(p: ParentFigures | undefined): string[] {
  if (!p) return [];
  const fig = (f: { tokens?: number | TokenCounts; cost?: number } | undefined) => {
    const t = tokenWords(tokenSum(f?.tokens));
    return [costWords(f?.cost), t && `${t} tok`].filter(Boolean).join(" ");
  };
  const none = (f: { tokens?: number | TokenCounts; cost?: number } | undefined) => !f?.cost && !tokenSum(f?.tokens);
  const out: string[] = [];
  if (none(p.own) && none(p.total)) return out;
  out.push(`this session ${fig(p.own) || "$0"}`);
  if ((p.subagents ?? 1) > 0 && !none(p.total)) out.push(`with subagents ${fig(p.total)}`);
  return out;
}

/**
 * The section's lines for input, at most maxLines, each made safe and cut
 * to width columns. The parent's view: the session's own figures and its
 * total with its subagents, then its subagents as the observer orders
 * them (running first, then newest), each beginning with its state mark;
 * the first four with their details where the lines allow, the rest one
 * line each, "+N more" for what does not fit. A child's view: its alias,
 * agent, state, figures and switches, and its parent. Warnings come first
 * after the head line (the toast has them whole). The rows looked at are
 * at most maxLines, whatever the page holds.
 */
export function sectionLines(input: SectionInput): string[] {
  const width = input.width ?? SIDEBAR_WIDTH;
  const max = input.maxLines ?? MAX_LINES;
  const now = input.now ?? Date.now();
  const out: string[] = [headLine(input)];
  const n = input.warnings.length;
  if (n > 0) {
    out.push(`! ${n} warning${n === 1 ? "" : "s"}:`);
    // The option's name first (the toast has the whole text).
    for (const w of input.warnings.slice(-3)) out.push(`  ${safeText(w).replace(/^hookwire:\s*(config warnings:\s*)?/, "").replace(/^config\./, "")}`);
  }
  const done = () => out.slice(0, max).map((l) => cutToWidth(l, width));
  if (input.observer.kind !== "ready") return done();
  const rows = input.page?.subagents ?? [];

  if (input.parentID) {
    let me: SubagentRow | undefined;
    for (let i = 0; i < rows.length && i < max; i++) if (rows[i].sessionID === input.sessionID) me = rows[i];
    if (!me) {
      out.push("subagent (not listed yet)");
    } else {
      out.push(`subagent ${safeText(me.alias) || "(no alias)"}${me.resumable === false ? "*" : ""} (${safeText(me.agent) || "?"})`);
      out.push(` ${MARK[stateWord(me)] ?? "·"} ${stateDetail(me, now, false)}`);
      out.push(...detailLines(me, input.cache, "   ", input.contextLimit));
    }
    out.push(`parent ${safeText(input.parentID)}`);
    return done();
  }

  const figures = parentLines(input.page?.parent);
  const own = cacheWords(input.cache.get(input.sessionID));
  // The session's own cache share goes under its own figures.
  if (own) figures.splice(figures.length ? 1 : 0, 0, figures.length ? `  ${own}` : `this session ${own}`);
  out.push(...figures);
  const total = input.page?.parent?.subagents ?? rows.length;
  if (rows.length === 0) {
    out.push("no subagents yet");
    return done();
  }
  out.push(`subagents (${total}):`);
  // The rows that fit: one line each at least, one kept for "+N more" when some are left out.
  let room = max - out.length;
  let fits = Math.min(rows.length, room);
  if (fits < total) fits = Math.min(rows.length, room - 1);
  for (let i = 0; i < fits; i++) {
    const r = rows[i];
    const first = ` ${MARK[stateWord(r)] ?? "·"} ${rowName(r)} ${stateDetail(r, now, false)}`;
    if (i < 4) {
      const details = detailLines(r, input.cache, "   ", input.contextLimit);
      // Details only where the rows after it still get their line.
      const left = fits - i - 1;
      const spare = room - 1 - left - (fits < total ? 1 : 0);
      out.push(first, ...details.slice(0, Math.max(0, spare)));
      room -= 1 + Math.min(details.length, Math.max(0, spare));
    } else {
      out.push(compactLine(r, now));
      room -= 1;
    }
  }
  if (fits < total) out.push(` +${total - fits} more: ctrl+p "hookwire"`);
  return done();
}
