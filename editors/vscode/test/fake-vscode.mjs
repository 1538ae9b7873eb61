// A fake of the `vscode` module: just what the extension uses (src/host.ts),
// recording every effect so that tests can look at it. VS Code itself
// cannot run here.

class Emitter {
  listeners = [];
  event = (listener) => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };
  fire(data) {
    for (const l of [...this.listeners]) l(data);
  }
  dispose() {
    this.listeners = [];
  }
}

class TreeItem {
  constructor(label, collapsibleState) {
    this.label = label;
    this.collapsibleState = collapsibleState;
  }
}

class ThemeIcon {
  constructor(id) {
    this.id = id;
  }
}

/**
 * A fresh fake. folders: workspace folder paths; config: settings by full
 * key ("hookwire.binary"); pick(items): what showQuickPick answers.
 */
export function createFakeVscode({ folders = [], config = {}, pick = () => undefined } = {}) {
  const commands = new Map();
  const treeViews = new Map();
  const statusBarItems = [];
  const outputChannels = [];
  const terminals = [];
  const errors = [];
  const statusMessages = [];
  const quickPicks = [];
  const clipboard = { text: "" };
  const configChanged = new Emitter();
  const foldersChanged = new Emitter();
  const settings = { ...config };
  const disposed = { commands: 0 };

  const host = {
    EventEmitter: Emitter,
    TreeItem,
    ThemeIcon,
    TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
    StatusBarAlignment: { Left: 1, Right: 2 },
    window: {
      createTreeView(viewId, options) {
        const view = { viewId, provider: options.treeDataProvider, options, selection: [], message: undefined, disposed: false, dispose() { this.disposed = true; } };
        treeViews.set(viewId, view);
        return view;
      },
      createStatusBarItem(alignment, priority) {
        const item = { alignment, priority, text: "", tooltip: undefined, command: undefined, visible: false, disposed: false, show() { this.visible = true; }, hide() { this.visible = false; }, dispose() { this.disposed = true; } };
        statusBarItems.push(item);
        return item;
      },
      createOutputChannel(name) {
        const ch = { name, lines: [], shown: 0, disposed: false, appendLine(l) { this.lines.push(l); }, show() { this.shown++; }, dispose() { this.disposed = true; } };
        outputChannels.push(ch);
        return ch;
      },
      createTerminal(options) {
        const t = { options, sent: [], shown: 0, sendText(text, exec = true) { this.sent.push({ text, exec }); }, show() { this.shown++; }, dispose() {} };
        terminals.push(t);
        return t;
      },
      async showQuickPick(items, options) {
        quickPicks.push({ items, options });
        return pick(items);
      },
      async showErrorMessage(message) {
        errors.push(message);
        return undefined;
      },
      setStatusBarMessage(text, ms) {
        statusMessages.push({ text, ms });
        return { dispose() {} };
      },
    },
    commands: {
      registerCommand(id, callback) {
        if (commands.has(id)) throw new Error(`command ${id} already registered`);
        commands.set(id, callback);
        return { dispose: () => { commands.delete(id); disposed.commands++; } };
      },
    },
    env: {
      clipboard: {
        async writeText(v) {
          clipboard.text = v;
        },
      },
    },
    workspace: {
      workspaceFolders: folders.map((p) => ({ uri: { fsPath: p }, name: p.split("/").at(-1) })),
      getConfiguration(section) {
        return { get: (key) => settings[section ? `${section}.${key}` : key] };
      },
      onDidChangeConfiguration: configChanged.event,
      onDidChangeWorkspaceFolders: foldersChanged.event,
    },
  };

  return {
    host,
    commands,
    treeViews,
    statusBarItems,
    outputChannels,
    terminals,
    errors,
    statusMessages,
    quickPicks,
    clipboard,
    disposed,
    /** Runs a registered command as VS Code would. */
    run(id, ...args) {
      const cb = commands.get(id);
      if (!cb) throw new Error(`no command ${id}`);
      return cb(...args);
    },
    /** Changes a setting and tells the extension. */
    setConfig(key, value) {
      settings[key] = value;
      configChanged.fire({ affectsConfiguration: (s) => key === s || key.startsWith(`${s}.`) });
    },
    /** Replaces the workspace folders and tells the extension. */
    setFolders(paths) {
      host.workspace.workspaceFolders = paths.map((p) => ({ uri: { fsPath: p }, name: p.split("/").at(-1) }));
      foldersChanged.fire({});
    },
  };
}

/** The items of a tree, depth first, as VS Code would ask for them. */
export async function treeNodes(provider, node, depth = 0, out = []) {
  for (const child of (await provider.getChildren(node)) ?? []) {
    const item = await provider.getTreeItem(child);
    out.push({ depth, node: child, item });
    await treeNodes(provider, child, depth + 1, out);
  }
  return out;
}

const ICONS = { pass: "✓", error: "✗", sync: "↻", "circle-outline": "○", person: "", "comment-discussion": "" };

/** The tree as text, the way the view lays it out (icons drawn as one character). */
export async function renderTree(provider) {
  const lines = [];
  for (const { depth, item } of await treeNodes(provider)) {
    const arrow = item.collapsibleState === 2 ? "▾ " : item.collapsibleState === 1 ? "▸ " : "";
    const icon = ICONS[item.iconPath?.id] ? `${ICONS[item.iconPath.id]} ` : "";
    lines.push(`${"  ".repeat(depth)}${arrow}${icon}${item.label}${item.description ? `  ${item.description}` : ""}`);
  }
  return lines.join("\n");
}
