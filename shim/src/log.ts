// Logging for the shim: OpenCode's app log when the SDK client is there,
// nothing otherwise; and, for the few problems a user must see, a toast in
// OpenCode's TUI as well. Under `opencode run` no TUI shows a toast, so the
// same lines go to the terminal (stderr, where `opencode run` prints its
// own notes; stdout stays the answer, or the JSON events). A log or toast
// call never throws and is never awaited by a hook.

export type Level = "debug" | "info" | "warn" | "error";

/** The parts of the OpenCode SDK client the shim logs and shows toasts through. */
export interface AppLogClient {
  app?: {
    log?: (options: {
      body: { service: string; level: Level; message: string; extra?: Record<string, unknown> };
    }) => unknown;
  };
  tui?: {
    showToast?: (options: {
      body: { title?: string; message: string; variant: "info" | "success" | "warning" | "error"; duration?: number };
    }) => unknown;
  };
}

const TOAST_VARIANT = { debug: "info", info: "info", warn: "warning", error: "error" } as const;

/** Writes one line to the terminal: stderr under `opencode run`, none in the TUI (it would draw over it). */
export type TerminalWriter = (line: string) => void;

/** Lines already written to the terminal by any Logger of this process: each problem reaches it once. */
const printed = new Set<string>();

/**
 * The terminal writer for this process: stderr when OpenCode runs `opencode
 * run` (its process.argv is ["bun", "/$bunfs/root/src/index.js", "run", ...],
 * docs/OPENCODE.md), else none: the TUI owns the terminal, and the other
 * commands (serve, session list, export) have no reader for it; nor under
 * `opencode run --interactive`, which draws on the terminal as the TUI does.
 */
export function runTerminal(argv: readonly string[] = process.argv): TerminalWriter | undefined {
  if (argv[2] !== "run") return undefined;
  // `run --interactive` (newer OpenCode) draws a footer on the terminal: like the TUI, not written to.
  const flags = argv.slice(3, argv.includes("--") ? argv.indexOf("--") : undefined);
  if (flags.some((a) => a === "-i" || a === "--interactive" || a === "--mini")) return undefined;
  return (line) => {
    process.stderr.write(`${line}\n`);
  };
}

/** A promise's rejection is dropped: nothing the client does may reach a hook. */
function ignoreRejection(result: unknown): void {
  if (result && typeof (result as Promise<unknown>).catch === "function") {
    (result as Promise<unknown>).catch(() => {});
  }
}

export class Logger {
  private readonly seen = new Set<string>();
  private readonly shown = new Set<string>();

  constructor(
    private readonly client: AppLogClient | undefined,
    private readonly service = "hookwire",
    private readonly terminal?: TerminalWriter,
  ) {}

  /** Whether lines reach a terminal (`opencode run`). */
  get toTerminal(): boolean {
    return this.terminal !== undefined;
  }

  /** Writes one entry to OpenCode's app log, silently dropping it on failure. */
  log(level: Level, message: string, extra?: Record<string, unknown>): void {
    try {
      ignoreRejection(this.client?.app?.log?.({ body: { service: this.service, level, message, extra } }));
    } catch {
      // The log is best effort: a broken client must not reach the hook.
    }
  }

  /** Logs only the first entry of each kind, so a failing sidecar cannot flood the log. */
  once(kind: string, level: Level, message: string, extra?: Record<string, unknown>): void {
    if (this.seen.has(kind)) return;
    this.seen.add(kind);
    this.log(level, message, extra);
  }

  /**
   * Logs the first entry of each kind and shows it as a toast in OpenCode's
   * TUI too: for the problems that otherwise only change behaviour silently
   * (no binary, config warnings, a sidecar given up on, state in memory only).
   */
  alert(kind: string, level: Level, message: string, extra?: Record<string, unknown>): void {
    if (this.shown.has(kind)) return;
    this.shown.add(kind);
    this.once(kind, level, message, extra);
    this.toast(level, message.replace(/^hookwire( shim)?: /, ""));
    if (!printed.has(message)) {
      printed.add(message);
      this.print(message);
    }
  }

  /** Logs and shows a toast every time: for events a user should see each of (a model switch). */
  notice(level: Level, message: string, extra?: Record<string, unknown>): void {
    this.log(level, message, extra);
    this.toast(level, message.replace(/^hookwire( shim)?: /, ""));
    this.print(message);
  }

  /** Logs, and writes to the terminal under `opencode run` (no toast): what a run's output needs next to it. */
  say(level: Level, message: string, extra?: Record<string, unknown>): void {
    this.log(level, message, extra);
    this.print(message);
  }

  private print(message: string): void {
    try {
      this.terminal?.(message);
    } catch {
      // a closed stderr must not reach a hook
    }
  }

  private toast(level: Level, message: string): void {
    try {
      // Without a TUI (`opencode run`) the call is answered and nothing shows.
      ignoreRejection(this.client?.tui?.showToast?.({ body: { title: "hookwire", message, variant: TOAST_VARIANT[level] } }));
    } catch {
      // best effort, like the log
    }
  }
}
