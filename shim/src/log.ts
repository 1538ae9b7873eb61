// Logging for the shim: OpenCode's app log when the SDK client is there,
// nothing otherwise; and, for the few problems a user must see, a toast in
// OpenCode's TUI as well. A log or toast call never throws and is never
// awaited by a hook.

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
  ) {}

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
  }

  /** Logs and shows a toast every time: for events a user should see each of (a model switch). */
  notice(level: Level, message: string, extra?: Record<string, unknown>): void {
    this.log(level, message, extra);
    this.toast(level, message.replace(/^hookwire( shim)?: /, ""));
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
