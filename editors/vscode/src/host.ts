// The part of the `vscode` API this extension uses, as plain types. The
// real module satisfies it (extension.ts passes it in); the tests pass a
// small fake that implements just this. Nothing here imports vscode.

export interface Disposable {
  dispose(): unknown;
}

export type Event<T> = (listener: (e: T) => unknown) => Disposable;

export interface EventEmitter<T> extends Disposable {
  event: Event<T>;
  fire(data: T): void;
}

export interface ThemeIcon {
  readonly id: string;
}

export interface TreeItem {
  label?: string | { label: string };
  id?: string;
  description?: string | boolean;
  // vscode's tooltip and iconPath take more types than this extension sets
  // (a string, a ThemeIcon); `any` lets its TreeItem pass both ways.
  tooltip?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  iconPath?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  contextValue?: string;
  collapsibleState?: number;
}

export interface TreeDataProvider<T> {
  onDidChangeTreeData?: Event<T | undefined | null | void>;
  getTreeItem(element: T): TreeItem | Thenable<TreeItem>;
  getChildren(element?: T): T[] | undefined | null | Thenable<T[] | undefined | null>;
}

export interface TreeView<T> extends Disposable {
  readonly selection: readonly T[];
  message?: string;
  description?: string;
}

export interface StatusBarItem extends Disposable {
  text: string;
  tooltip?: string | { readonly value: string };
  command?: string | { readonly command: string };
  show(): void;
  hide(): void;
}

export interface OutputChannel extends Disposable {
  appendLine(value: string): void;
  show(preserveFocus?: boolean): void;
}

export interface Terminal extends Disposable {
  sendText(text: string, shouldExecute?: boolean): void;
  show(preserveFocus?: boolean): void;
}

export interface QuickPickItem {
  label: string;
  description?: string;
  detail?: string;
}

export interface WorkspaceFolder {
  readonly uri: { readonly fsPath: string };
  readonly name: string;
}

export interface WorkspaceConfiguration {
  get<T>(section: string): T | undefined;
}

export interface ConfigurationChangeEvent {
  affectsConfiguration(section: string): boolean;
}

export interface ExtensionContext {
  readonly subscriptions: { dispose(): unknown }[];
  readonly extension?: { readonly packageJSON: { version?: string } };
}

/** The vscode module, as far as this extension uses it. */
export interface Host {
  EventEmitter: new <T>() => EventEmitter<T>;
  TreeItem: new (label: string, collapsibleState?: number) => TreeItem;
  ThemeIcon: new (id: string) => ThemeIcon;
  TreeItemCollapsibleState: { readonly None: number; readonly Collapsed: number; readonly Expanded: number };
  StatusBarAlignment: { readonly Left: number; readonly Right: number };
  window: {
    createTreeView<T>(viewId: string, options: { treeDataProvider: TreeDataProvider<T>; showCollapseAll?: boolean }): TreeView<T>;
    createStatusBarItem(alignment?: number, priority?: number): StatusBarItem;
    createOutputChannel(name: string): OutputChannel;
    createTerminal(options: { name?: string; cwd?: string }): Terminal;
    showQuickPick<T extends QuickPickItem>(items: readonly T[], options?: { placeHolder?: string }): Thenable<T | undefined>;
    showErrorMessage(message: string): Thenable<string | undefined>;
    setStatusBarMessage(text: string, hideAfterTimeout: number): Disposable;
  };
  commands: {
    registerCommand(command: string, callback: (...args: any[]) => any): Disposable;
  };
  env: {
    clipboard: { writeText(value: string): Thenable<void> };
  };
  workspace: {
    readonly workspaceFolders: readonly WorkspaceFolder[] | undefined;
    getConfiguration(section?: string): WorkspaceConfiguration;
    onDidChangeConfiguration: Event<ConfigurationChangeEvent>;
    onDidChangeWorkspaceFolders: Event<unknown>;
  };
}
