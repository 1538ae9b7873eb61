// What the sessions view shows, computed from `sessions.list` answers: the
// entries read loosely (the observer's field names, and older ones), grouped
// by parent session and then agent, and the text of each line. Pure
// functions: no vscode, no IO, no clock (callers pass `now`).

/** The last run of a task session, as the observer reports it. */
export interface RunState {
  state: string; // "running" | "completed" | "error", or what a newer observer sends
  error?: string;
}

/** The model decision recorded for a task session. */
export interface ModelDecision {
  model: string;
  variant?: string;
  rung?: string;
}

/** A move of a task session off a failing or cooling model (PROTOCOL.md 4.8). */
export interface ModelSwitch {
  from: string;
  to: string;
  reason: string;
  at?: Date;
}

/** One remembered task session, with the workspace folder whose observer reported it. */
export interface SessionEntry {
  parent: string;
  agent: string;
  alias: string;
  label: string;
  taskId: string;
  lastUse?: Date;
  run?: RunState;
  model?: ModelDecision;
  /** Its model switches, oldest first (none: absent). */
  switches?: ModelSwitch[];
  /** The workspace folder (the observer's --project) the entry came from. */
  project: string;
}

export interface AgentGroup {
  parent: string;
  agent: string;
  entries: SessionEntry[];
}

export interface ParentGroup {
  parent: string;
  project: string;
  agents: AgentGroup[];
  lastUse?: Date;
  count: number;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const firstStr = (o: Record<string, unknown>, ...keys: string[]): string | undefined => {
  for (const k of keys) {
    const v = str(o[k]);
    if (v !== undefined) return v;
  }
  return undefined;
};
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function readDate(v: unknown): Date | undefined {
  if (typeof v !== "string" && typeof v !== "number") return undefined;
  const d = new Date(v);
  // Go's zero time.Time ("0001-01-01T00:00:00Z") means "never".
  return Number.isNaN(d.getTime()) || d.getUTCFullYear() <= 1 ? undefined : d;
}

function readRun(v: unknown): RunState | undefined {
  if (typeof v === "string" && v !== "") return { state: v };
  if (!isObject(v)) return undefined;
  const state = str(v.state);
  if (!state) return undefined;
  const error = str(v.error);
  return error ? { state, error } : { state };
}

function readModel(v: unknown): ModelDecision | undefined {
  if (typeof v === "string" && v !== "") return { model: v };
  if (!isObject(v)) return undefined;
  const model = str(v.model);
  if (!model) return undefined;
  const out: ModelDecision = { model };
  const variant = str(v.variant);
  const rung = str(v.rung);
  if (variant) out.variant = variant;
  if (rung) out.rung = rung;
  return out;
}

/**
 * One entry of a `sessions.list` answer, or undefined when it lacks what
 * the view needs (a task id and an alias). Field names: the sidecar's
 * (`parent`, `lastUse`) and the observer protocol's (`parentSessionID`,
 * `lastUsed`) are both read.
 */
export function readEntry(raw: unknown, project: string): SessionEntry | undefined {
  if (!isObject(raw)) return undefined;
  const taskId = firstStr(raw, "taskId", "taskID", "sessionID");
  const alias = str(raw.alias);
  if (!taskId || !alias) return undefined;
  const entry: SessionEntry = {
    parent: firstStr(raw, "parentSessionID", "parent", "parentID") ?? "",
    agent: str(raw.agent) ?? "",
    alias,
    label: str(raw.label) ?? "",
    taskId,
    project,
  };
  const lastUse = readDate(raw.lastUse ?? raw.lastUsed);
  if (lastUse) entry.lastUse = lastUse;
  const run = readRun(raw.run);
  if (run) entry.run = run;
  const model = readModel(raw.model);
  if (model) entry.model = model;
  const switches = readSwitches(raw.switches);
  if (switches.length > 0) entry.switches = switches;
  return entry;
}

/** The well-formed switches of a raw list (anything else reads as none). */
export function readSwitches(v: unknown): ModelSwitch[] {
  if (!Array.isArray(v)) return [];
  const out: ModelSwitch[] = [];
  for (const raw of v) {
    if (!raw || typeof raw !== "object") continue;
    const r = raw as Record<string, unknown>;
    const from = str(r.from);
    const to = str(r.to);
    if (!from || !to) continue;
    const sw: ModelSwitch = { from, to, reason: str(r.reason) ?? "" };
    const at = readDate(r.at);
    if (at) sw.at = at;
    out.push(sw);
  }
  return out;
}

/** All readable entries of a `sessions.list` result (anything but an array reads as none). */
export function readEntries(result: unknown, project: string): SessionEntry[] {
  if (!Array.isArray(result)) return [];
  const out: SessionEntry[] = [];
  for (const raw of result) {
    const e = readEntry(raw, project);
    if (e) out.push(e);
  }
  return out;
}

const time = (d?: Date) => d?.getTime() ?? 0;
const newestFirst = (a?: Date, b?: Date) => time(b) - time(a);

/**
 * The entries of several folders as one list: an entry two folders both
 * report (two folders of one repository share its state file) is kept once.
 */
export function mergeEntries(lists: SessionEntry[][]): SessionEntry[] {
  const seen = new Set<string>();
  const out: SessionEntry[] = [];
  for (const list of lists) {
    for (const e of list) {
      const key = `${e.parent}\u0000${e.agent}\u0000${e.taskId}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(e);
    }
  }
  return out;
}

/**
 * The tree's shape: parent sessions, most recently used first; under each,
 * its agents, most recently used first; under each, its entries, newest
 * first. Ties keep the order of the input (the sidecar lists newest first).
 */
export function groupEntries(entries: SessionEntry[]): ParentGroup[] {
  const parents = new Map<string, ParentGroup>();
  for (const e of entries) {
    let p = parents.get(e.parent);
    if (!p) {
      p = { parent: e.parent, project: e.project, agents: [], count: 0 };
      parents.set(e.parent, p);
    }
    let a = p.agents.find((g) => g.agent === e.agent);
    if (!a) {
      a = { parent: e.parent, agent: e.agent, entries: [] };
      p.agents.push(a);
    }
    a.entries.push(e);
    p.count++;
    if (time(e.lastUse) > time(p.lastUse)) p.lastUse = e.lastUse;
  }
  const groups = [...parents.values()];
  for (const p of groups) {
    for (const a of p.agents) a.entries.sort((x, y) => newestFirst(x.lastUse, y.lastUse));
    p.agents.sort((x, y) => newestFirst(x.entries[0]?.lastUse, y.entries[0]?.lastUse));
  }
  groups.sort((x, y) => newestFirst(x.lastUse, y.lastUse));
  return groups;
}

/** A short age: "now", "42s", "5m", "3h", "2d". */
export function formatAge(since: Date | undefined, now: Date): string {
  if (!since) return "";
  const s = Math.floor((now.getTime() - since.getTime()) / 1000);
  if (s < 5) return "now";
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** "provider/model (variant)", or "" when no decision was recorded. */
export function formatModel(m?: ModelDecision): string {
  if (!m) return "";
  return m.variant ? `${m.model} (${m.variant})` : m.model;
}

/** A session's prompt-cache figures, from status.cache.perSession (PROTOCOL.md 4.9). */
export interface CacheFigures {
  /** Share of prompt tokens read from the cache, 0 to 1. */
  share: number;
  /** The provider reported no cache figures (every request read and wrote 0): there is no share to show. */
  noFigures?: boolean;
  requests: number;
  busts: number;
  bustsInARow: number;
  /** The newest bust's cause and detail, when there was one. */
  lastCause?: string;
  lastDetail?: string;
  lastByHookwire?: boolean;
}

/** Reads status.cache.perSession into figures by session id; anything unreadable is left out. */
export function readCache(status: unknown): Map<string, CacheFigures> {
  const out = new Map<string, CacheFigures>();
  const per = (status as { cache?: { perSession?: unknown } } | null)?.cache?.perSession;
  if (!Array.isArray(per)) return out;
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
  for (const raw of per) {
    if (!isObject(raw) || typeof raw.session !== "string" || raw.session === "") continue;
    const c: CacheFigures = { share: Math.min(num(raw.cacheShare), 1), requests: num(raw.requests), busts: num(raw.busts), bustsInARow: num(raw.bustsInARow) };
    if (raw.noCacheFigures === true || (raw.cacheShare === null && c.requests > 0)) c.noFigures = true;
    const last = raw.lastBust;
    if (isObject(last)) {
      if (typeof last.cause === "string") c.lastCause = last.cause;
      if (typeof last.detail === "string") c.lastDetail = last.detail;
      if (typeof last.byHookwire === "boolean") c.lastByHookwire = last.byHookwire;
    }
    out.set(raw.session, c);
  }
  return out;
}

/** "83% cached", with a bust marker: "83% cached ⚠2" ("⚠⚠" prefix when the last two busted in a row); "no cache figures" when the provider reported none; "" without requests. */
export function cacheText(c?: CacheFigures): string {
  if (!c || c.requests === 0) return "";
  if (c.noFigures) return "no cache figures";
  // Short of all never reads 100%, above none never 0%.
  const p = Math.round(c.share * 100);
  const share = `${p >= 100 && c.share < 1 ? 99 : p <= 0 && c.share > 0 ? 1 : p}% cached`;
  if (c.busts === 0) return share;
  return `${share} ${c.bustsInARow >= 2 ? "⚠⚠" : "⚠"}${c.busts}`;
}

/** The hover lines of a session's cache figures. */
export function cacheTooltip(c?: CacheFigures): string[] {
  if (!c || c.requests === 0) return [];
  if (c.noFigures) return [`prompt cache: the provider reported no cache figures over ${c.requests} request${c.requests === 1 ? "" : "s"} (every cache read and write was 0)`];
  const lines = [`prompt cache: ${Math.round(c.share * 100)}% of prompt tokens read from cache over ${c.requests} request${c.requests === 1 ? "" : "s"}; ${c.busts} bust${c.busts === 1 ? "" : "s"}`];
  if (c.lastCause) lines.push(`last bust: ${c.lastCause}${c.lastByHookwire ? " (hookwire)" : ""}${c.lastDetail ? `: ${c.lastDetail}` : ""}`);
  return lines;
}

/** A subagent's state and figures from `subagents.list` (PROTOCOL.md 4.10). */
export interface SubagentFigures {
  /** running, retrying, done, failed, cancelled, interrupted (or what a newer observer sends). */
  state: string;
  error?: string;
  /** The model its latest step ran on. */
  model?: string;
  /** All its tokens: input, output, reasoning, cache read and write. */
  tokens: number;
  cost: number;
  retryAttempt?: number;
}

/** A parent's figures from `subagents.list`: its own and its total with its subagents. */
export interface ParentFigures {
  ownCost: number;
  totalCost: number;
  ownTokens: number;
  totalTokens: number;
  subagents: number;
  running: number;
}

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
const tokenSum = (t: unknown) => {
  const o = isObject(t) ? t : {};
  return num(o.input) + num(o.output) + num(o.reasoning) + num(o.cacheRead) + num(o.cacheWrite);
};

/** A `subagents.list` result: the parent's figures, and each subagent's by session id; anything unreadable is left out. */
export function readSubagents(result: unknown): { parent?: ParentFigures; rows: Map<string, SubagentFigures> } {
  const rows = new Map<string, SubagentFigures>();
  if (!isObject(result)) return { rows };
  let parent: ParentFigures | undefined;
  if (isObject(result.parent)) {
    const p = result.parent;
    const own = isObject(p.own) ? p.own : {};
    const total = isObject(p.total) ? p.total : {};
    parent = { ownCost: num(own.cost), totalCost: num(total.cost), ownTokens: tokenSum(own.tokens), totalTokens: tokenSum(total.tokens), subagents: num(p.subagents), running: num(p.running) };
  }
  for (const raw of Array.isArray(result.subagents) ? result.subagents : []) {
    if (!isObject(raw) || typeof raw.sessionID !== "string" || typeof raw.state !== "string") continue;
    const f: SubagentFigures = { state: raw.state, tokens: tokenSum(raw.tokens), cost: num(raw.cost) };
    if (typeof raw.error === "string" && raw.error !== "") f.error = raw.error;
    if (typeof raw.model === "string" && raw.model !== "") f.model = raw.model;
    if (isObject(raw.retry) && num(raw.retry.attempt) > 0) f.retryAttempt = num(raw.retry.attempt);
    rows.set(raw.sessionID, f);
  }
  return parent ? { parent, rows } : { rows };
}

/** Tokens in a few characters: "950 tok", "12.3k tok", "1.2M tok". */
export function tokensText(n: number): string {
  if (n < 1000) return `${n} tok`;
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k tok`;
  return `${(n / 1_000_000).toFixed(1)}M tok`;
}

/** A cost as OpenCode computes it: "$0.0031". */
export function costText(c: number): string {
  return `$${c.toFixed(4)}`;
}

/** A subagent's state and figures on one line: "retrying (attempt 2) · 1.2k tok · $0.0031"; "" without figures. */
export function subagentText(f?: SubagentFigures): string {
  if (!f) return "";
  const state = f.state === "retrying" && f.retryAttempt ? `retrying (attempt ${f.retryAttempt})` : f.state;
  return [state, f.tokens > 0 ? tokensText(f.tokens) : "", f.tokens > 0 || f.cost > 0 ? costText(f.cost) : ""].filter((s) => s !== "").join(" · ");
}

/** A parent's figures, labelled so a user can tell them apart: "total $0.0456 with subagents (own $0.0123) · 1 running"; "" when no subagent of it is recorded. */
export function parentFiguresText(p?: ParentFigures): string {
  if (!p || p.subagents === 0) return "";
  const running = p.running > 0 ? ` · ${p.running} running` : "";
  return `total ${costText(p.totalCost)} with subagents (own ${costText(p.ownCost)})${running}`;
}

/** The description beside an entry's alias: label · model (and the model it left) · state and figures (subagents.list's, else the run state) · cache · age, blanks left out. */
export function entryDescription(e: SessionEntry, now: Date, cache?: CacheFigures, sub?: SubagentFigures): string {
  const last = e.switches?.at(-1);
  const model = (sub?.model ?? formatModel(e.model)) + (last ? ` (from ${last.from})` : "");
  const state = sub ? subagentText(sub) : (e.run?.state ?? "");
  return [e.label, model.trim(), state, cacheText(cache), formatAge(e.lastUse, now)].filter((s) => s !== "").join(" · ");
}

/** The hover text of an entry: every field on its own line. */
export function entryTooltip(e: SessionEntry): string {
  const lines = [`${e.alias}: ${e.label}`, `agent: ${e.agent}`, `session: ${e.taskId}`, `parent: ${e.parent}`];
  if (e.model) lines.push(`model: ${formatModel(e.model)}${e.model.rung ? ` (decided by ${e.model.rung})` : ""}`);
  for (const sw of e.switches ?? []) lines.push(`switched: ${sw.from} → ${sw.to}${sw.at ? ` at ${sw.at.toISOString()}` : ""}${sw.reason ? ` (${sw.reason})` : ""}`);
  if (e.run) lines.push(`last run: ${e.run.state}${e.run.error ? `: ${e.run.error}` : ""}`);
  if (e.lastUse) lines.push(`last used: ${e.lastUse.toISOString()}`);
  return lines.join("\n");
}

/** The description beside a parent session: how many sessions, its own prompt cache, and when last used. */
export function parentDescription(p: ParentGroup, now: Date, cache?: CacheFigures): string {
  const n = `${p.count} session${p.count === 1 ? "" : "s"}`;
  return [n, cacheText(cache), formatAge(p.lastUse, now)].filter((s) => s !== "").join(" · ");
}

/** A codicon name for a run state (or a subagent's state, PROTOCOL.md 4.10). */
export function runIcon(run?: RunState): string {
  switch (run?.state) {
    case "running":
    case "retrying":
      return "sync";
    case "completed":
    case "done":
      return "pass";
    case "error":
    case "failed":
      return "error";
    case "cancelled":
    case "interrupted":
      return "debug-stop";
    default:
      return "circle-outline";
  }
}
