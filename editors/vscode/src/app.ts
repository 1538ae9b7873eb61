// The extension's behaviour behind a Host (the vscode API as far as it is
// used): one `hookwire observe` per workspace folder, the "Subagent
// Sessions" tree, the status-bar item and the commands. extension.ts passes
// the real vscode module; the tests pass a fake one.
import type { Disposable, EventEmitter, ExtensionContext, Host, OutputChannel, QuickPickItem, StatusBarItem, TreeDataProvider, TreeItem, TreeView } from "./host.js";
import {
  entryDescription,
  entryTooltip,
  groupEntries,
  mergeEntries,
  parentDescription,
  readEntries,
  runIcon,
  type AgentGroup,
  type ParentGroup,
  type SessionEntry,
  readCache,
  cacheTooltip,
  type CacheFigures,
  readSubagents,
  subagentText,
  parentFiguresText,
  type SubagentFigures,
  type ParentFigures,
} from "./entries.js";
import { Observer, type ObserverOptions, type ObserverState } from "./observer.js";

/** How many parents' subagent figures a refresh reads (the newest; one subagents.list each). */
const MAX_PARENT_FIGURES = 20;

export const VIEW_ID = "hookwire.sessions";
export const COMMANDS = {
  copyAlias: "hookwire.copyAlias",
  copySessionId: "hookwire.copySessionId",
  openInTerminal: "hookwire.openInTerminal",
  showStatus: "hookwire.showStatus",
  refresh: "hookwire.refresh",
} as const;

export type Node =
  | { kind: "parent"; group: ParentGroup }
  | { kind: "agent"; group: AgentGroup }
  | { kind: "session"; entry: SessionEntry };

export interface AppOptions {
  /** The environment: HOOKWIRE_BIN there overrides the hookwire.binary setting. */
  env?: NodeJS.ProcessEnv;
  /** The clock the ages are computed against. */
  now?: () => Date;
  /** Passed on to each Observer (backoff and timeouts, for tests). */
  observer?: Partial<Pick<ObserverOptions, "initialBackoffMs" | "maxBackoffMs" | "stableMs" | "requestTimeoutMs">>;
}

interface Folder {
  path: string;
  name: string;
  observer: Observer;
  entries: SessionEntry[];
  /** Prompt-cache figures by session (status.cache, PROTOCOL.md 4.8). */
  cache: Map<string, CacheFigures>;
  /** Subagents' states and figures by session, and parents' figures by parent (subagents.list, PROTOCOL.md 4.10). */
  subagents: Map<string, SubagentFigures>;
  parents: Map<string, ParentFigures>;
  listing: boolean;
  dirty: boolean;
  subs: Disposable[];
}

/** The running extension; dispose stops every observer. */
export class App {
  private readonly folders = new Map<string, Folder>();
  private readonly changed: EventEmitter<Node | undefined | void>;
  private readonly tree: TreeView<Node>;
  private readonly statusItem: StatusBarItem;
  private readonly output: OutputChannel;
  private readonly subs: Disposable[] = [];
  private readonly ageTimer: NodeJS.Timeout;
  private groups: ParentGroup[] = [];
  private disposing?: Promise<void>;
  private readonly now: () => Date;
  private readonly env: NodeJS.ProcessEnv;
  private readonly version: string;

  constructor(
    private readonly vscode: Host,
    context: ExtensionContext,
    private readonly options: AppOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.env = options.env ?? process.env;
    this.version = context.extension?.packageJSON.version ?? "0.0.0";
    this.output = vscode.window.createOutputChannel("hookwire");
    this.changed = new vscode.EventEmitter<Node | undefined | void>();
    const provider: TreeDataProvider<Node> = {
      onDidChangeTreeData: this.changed.event,
      getTreeItem: (n) => this.treeItem(n),
      getChildren: (n) => this.children(n),
    };
    this.tree = vscode.window.createTreeView<Node>(VIEW_ID, { treeDataProvider: provider, showCollapseAll: true });
    this.statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
    this.statusItem.command = COMMANDS.showStatus;
    const c = vscode.commands;
    this.subs.push(
      this.output,
      this.changed,
      this.tree,
      this.statusItem,
      c.registerCommand(COMMANDS.copyAlias, (arg?: unknown) => this.copy(arg, "alias")),
      c.registerCommand(COMMANDS.copySessionId, (arg?: unknown) => this.copy(arg, "taskId")),
      c.registerCommand(COMMANDS.openInTerminal, (arg?: unknown) => this.openInTerminal(arg)),
      c.registerCommand(COMMANDS.showStatus, () => this.showStatus()),
      c.registerCommand(COMMANDS.refresh, () => this.refreshAll()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("hookwire.binary")) void this.restartAll();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.syncFolders()),
    );
    // Ages in the descriptions go stale; redraw now and then.
    this.ageTimer = setInterval(() => this.changed.fire(), 30_000);
    this.ageTimer.unref?.();
    context.subscriptions.push({ dispose: () => void this.dispose() });
    void this.syncFolders();
    this.render();
  }

  /** The observers, one per workspace folder (for status and tests). */
  get observers(): Observer[] {
    return [...this.folders.values()].map((f) => f.observer);
  }

  /** Every remembered session of every folder, deduplicated. */
  get entries(): SessionEntry[] {
    return mergeEntries([...this.folders.values()].map((f) => f.entries));
  }

  dispose(): Promise<void> {
    if (!this.disposing) {
      clearInterval(this.ageTimer);
      const folders = [...this.folders.values()];
      this.folders.clear();
      this.disposing = Promise.all(folders.map((f) => this.stopFolder(f))).then(() => {
        for (const d of this.subs) d.dispose();
      });
    }
    return this.disposing;
  }

  /** Re-lists every folder's sessions. */
  async refreshAll(): Promise<void> {
    await Promise.all([...this.folders.values()].map((f) => this.refresh(f)));
  }

  // ---- folders and observers --------------------------------------------

  private binary(): string {
    return this.env.HOOKWIRE_BIN || this.vscode.workspace.getConfiguration("hookwire").get<string>("binary") || "hookwire";
  }

  private async syncFolders(): Promise<void> {
    if (this.disposing) return;
    const wanted = new Map((this.vscode.workspace.workspaceFolders ?? []).map((f) => [f.uri.fsPath, f.name]));
    const stops: Promise<void>[] = [];
    for (const [path, f] of this.folders) {
      if (!wanted.has(path)) {
        this.folders.delete(path);
        stops.push(this.stopFolder(f));
      }
    }
    for (const [path, name] of wanted) if (!this.folders.has(path)) this.startFolder(path, name);
    this.render();
    await Promise.all(stops);
    this.render();
  }

  private startFolder(path: string, name: string): void {
    const observer = new Observer({
      binary: this.binary(),
      project: path,
      clientVersion: this.version,
      env: this.env,
      log: (line) => this.output.appendLine(`[${name}] ${line}`),
      ...this.options.observer,
    });
    const folder: Folder = { path, name, observer, entries: [], cache: new Map(), subagents: new Map(), parents: new Map(), listing: false, dirty: false, subs: [] };
    let reportedStartFailure = false;
    let everReady = false;
    folder.subs.push(
      observer.onChanged(() => void this.refresh(folder)),
      observer.onStateChange((s: ObserverState) => {
        if (s === "ready") everReady = true;
        if (s === "restarting" && !everReady && !reportedStartFailure) {
          // Said once: the first run failed before its handshake, so it is
          // likely to fail again (no binary, one without observe).
          reportedStartFailure = true;
          void this.vscode.window.showErrorMessage(
            `hookwire: the observer did not start: ${observer.lastError}. It needs a hookwire with the observe command: install one, or set "hookwire.binary" to its path.`,
          );
        }
        this.render();
      }),
    );
    this.folders.set(path, folder);
    observer.start();
  }

  private async stopFolder(f: Folder): Promise<void> {
    for (const d of f.subs) d.dispose();
    await f.observer.dispose();
  }

  private async restartAll(): Promise<void> {
    const folders = [...this.folders.values()];
    this.folders.clear();
    await Promise.all(folders.map((f) => this.stopFolder(f)));
    await this.syncFolders();
  }

  /** Lists f's sessions; a call while one is under way makes that one list again when done. */
  private async refresh(f: Folder): Promise<void> {
    if (f.listing) {
      f.dirty = true;
      return;
    }
    f.listing = true;
    try {
      do {
        f.dirty = false;
        if (f.observer.state !== "ready") break; // keep what was last seen until it is back
        try {
          f.entries = readEntries(await f.observer.list(), f.path);
        } catch (err) {
          this.output.appendLine(`[${f.name}] sessions.list failed: ${err instanceof Error ? err.message : String(err)}`);
          break;
        }
        try {
          f.cache = readCache(await f.observer.status());
        } catch {
          // an older sidecar or a failed status: the view shows no cache figures
        }
        await this.readSubagentFigures(f);
        if (this.folders.get(f.path) === f) this.render();
      } while (f.dirty);
    } finally {
      f.listing = false;
    }
  }

  /** The subagents' figures of f's parents shown (the newest MAX_PARENT_FIGURES), one subagents.list each. */
  private async readSubagentFigures(f: Folder): Promise<void> {
    const subagents = new Map<string, SubagentFigures>();
    const parents = new Map<string, ParentFigures>();
    const shown = groupEntries(f.entries).slice(0, MAX_PARENT_FIGURES);
    for (const g of shown) {
      if (!g.parent) continue;
      try {
        const r = readSubagents(await f.observer.subagents(g.parent));
        if (r.parent) parents.set(g.parent, r.parent);
        for (const [id, fig] of r.rows) subagents.set(id, fig);
      } catch {
        return; // an older observer without subagents.list: the view shows the run states
      }
    }
    f.subagents = subagents;
    f.parents = parents;
  }

  // ---- view ---------------------------------------------------------------

  private render(): void {
    if (this.disposing) return;
    this.groups = groupEntries(this.entries);
    this.tree.message = this.groups.length === 0 ? this.emptyMessage() : undefined;
    this.changed.fire();
    const s = statusBarState(this.entries.length, [...this.folders.values()].map((f) => ({ name: f.name, state: f.observer.state, error: f.observer.lastError, pid: f.observer.pid })));
    if (s === undefined) {
      this.statusItem.hide();
      return;
    }
    this.statusItem.text = s.text;
    this.statusItem.tooltip = s.tooltip;
    this.statusItem.show();
  }

  private emptyMessage(): string {
    if (this.folders.size === 0) return "Open a folder to see its subagent sessions.";
    const down = [...this.folders.values()].find((f) => f.observer.state === "restarting");
    if (down) return `hookwire observe is not running: ${down.observer.lastError}`;
    return "No remembered subagent sessions yet. They appear when an orchestrator delegates a task.";
  }

  private children(n?: Node): Node[] {
    if (!n) return this.groups.map((group) => ({ kind: "parent", group }));
    if (n.kind === "parent") return n.group.agents.map((group) => ({ kind: "agent", group }));
    if (n.kind === "agent") return n.group.entries.map((entry) => ({ kind: "session", entry }));
    return [];
  }

  /** A session's prompt-cache figures, as its folder's observer last reported them. */
  private cacheOf(project: string, session: string): CacheFigures | undefined {
    return this.folders.get(project)?.cache.get(session);
  }

  private treeItem(n: Node): TreeItem {
    const v = this.vscode;
    const now = this.now();
    if (n.kind === "parent") {
      const item = new v.TreeItem(n.group.parent || "(unknown parent)", v.TreeItemCollapsibleState.Expanded);
      item.id = `p:${n.group.parent}`;
      const folder = this.folders.size > 1 ? ` · ${this.folders.get(n.group.project)?.name ?? n.group.project}` : "";
      const cache = this.cacheOf(n.group.project, n.group.parent);
      const figures = this.folders.get(n.group.project)?.parents.get(n.group.parent);
      item.description = [parentDescription(n.group, now, cache), parentFiguresText(figures)].filter((s) => s !== "").join(" · ") + folder;
      item.tooltip = [`parent session ${n.group.parent}`, `project ${n.group.project}`, ...cacheTooltip(cache)].join("\n");
      item.iconPath = new v.ThemeIcon("comment-discussion");
      item.contextValue = "hookwire.parent";
      return item;
    }
    if (n.kind === "agent") {
      const item = new v.TreeItem(n.group.agent || "(unknown agent)", v.TreeItemCollapsibleState.Expanded);
      item.id = `a:${n.group.parent}:${n.group.agent}`;
      item.description = String(n.group.entries.length);
      item.iconPath = new v.ThemeIcon("person");
      item.contextValue = "hookwire.agent";
      return item;
    }
    const e = n.entry;
    const item = new v.TreeItem(e.alias, v.TreeItemCollapsibleState.None);
    item.id = `s:${e.parent}:${e.agent}:${e.taskId}`;
    const cache = this.cacheOf(e.project, e.taskId);
    const sub = this.folders.get(e.project)?.subagents.get(e.taskId);
    item.description = entryDescription(e, now, cache, sub);
    item.tooltip = [entryTooltip(e), ...(sub ? [`now: ${subagentText(sub)}${sub.error ? `: ${sub.error}` : ""}`] : []), ...cacheTooltip(cache)].join("\n");
    item.iconPath = new v.ThemeIcon(runIcon(sub ? { state: sub.state } : e.run));
    item.contextValue = "hookwire.session";
    return item;
  }

  // ---- commands -----------------------------------------------------------

  /** The entry a command acts on: its argument (a tree node), else the tree's selection, else the user's pick. */
  private async target(arg: unknown): Promise<SessionEntry | undefined> {
    const fromNode = (n: unknown) => (isNode(n) && n.kind === "session" ? n.entry : undefined);
    const chosen = fromNode(arg) ?? fromNode(this.tree.selection[0]);
    if (chosen) return chosen;
    const entries = this.entries;
    if (entries.length === 0) {
      this.vscode.window.setStatusBarMessage("hookwire: no remembered sessions", 3000);
      return undefined;
    }
    const items: (QuickPickItem & { entry: SessionEntry })[] = entries.map((entry) => ({
      label: entry.alias,
      description: entryDescription(entry, this.now()),
      detail: `${entry.agent} · parent ${entry.parent}`,
      entry,
    }));
    return (await this.vscode.window.showQuickPick(items, { placeHolder: "Subagent session" }))?.entry;
  }

  private async copy(arg: unknown, field: "alias" | "taskId"): Promise<string | undefined> {
    const e = await this.target(arg);
    if (!e) return undefined;
    await this.vscode.env.clipboard.writeText(e[field]);
    this.vscode.window.setStatusBarMessage(`hookwire: copied ${e[field]}`, 3000);
    return e[field];
  }

  private async openInTerminal(arg: unknown): Promise<void> {
    const e = await this.target(arg);
    if (!e) return;
    const opencode = this.vscode.workspace.getConfiguration("hookwire").get<string>("opencodeBinary") || "opencode";
    const term = this.vscode.window.createTerminal({ name: `OpenCode ${e.alias}`, cwd: e.project });
    term.show();
    term.sendText(openCommand(opencode, e.taskId));
  }

  private async showStatus(): Promise<string> {
    const lines: string[] = [];
    if (this.folders.size === 0) lines.push("hookwire: no workspace folder is open, so no observer runs.");
    for (const f of this.folders.values()) {
      const o = f.observer;
      lines.push(`== ${f.name} (${f.path})`);
      lines.push(`observer: ${o.state}${o.pid ? `, pid ${o.pid}` : ""}, started ${o.starts} time${o.starts === 1 ? "" : "s"}${o.lastError ? `, last ended: ${o.lastError}` : ""}`);
      if (o.state === "ready") {
        try {
          lines.push(JSON.stringify(await o.status(), null, 2));
        } catch (err) {
          lines.push(`status failed: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
    const text = lines.join("\n");
    for (const l of lines) this.output.appendLine(l);
    this.output.show(true);
    return text;
  }
}

function isNode(v: unknown): v is Node {
  return typeof v === "object" && v !== null && "kind" in v;
}

/** The shell line that opens a session in OpenCode's TUI (1.18: `opencode --session <id>`). */
export function openCommand(opencode: string, sessionId: string): string {
  return `${shellQuote(opencode)} --session ${shellQuote(sessionId)}`;
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface FolderState {
  name: string;
  state: ObserverState;
  error: string;
  pid?: number;
}

/** The status-bar item's text and tooltip; undefined hides it (no folder open). */
export function statusBarState(count: number, folders: FolderState[]): { text: string; tooltip: string } | undefined {
  if (folders.length === 0) return undefined;
  const tooltip = folders
    .map((f) => `${f.name}: ${f.state === "ready" ? `observing (pid ${f.pid})` : f.state}${f.state !== "ready" && f.error ? `: ${f.error}` : ""}`)
    .concat("Click for the observer's status.")
    .join("\n");
  if (folders.every((f) => f.state === "starting") && count === 0) return { text: "hookwire: starting…", tooltip };
  const down = folders.some((f) => f.state === "restarting" || f.state === "stopped");
  return { text: `hookwire: ${count} resumable${down ? " $(warning)" : ""}`, tooltip };
}

/** Starts the extension on host; the returned App is also disposed with context.subscriptions. */
export function activateWith(host: Host, context: ExtensionContext, options?: AppOptions): App {
  return new App(host, context, options);
}
