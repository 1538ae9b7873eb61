// Logging for the shim: OpenCode's app log when the SDK client is there,
// nothing otherwise. A log call never throws and is never awaited by a hook.

export type Level = "debug" | "info" | "warn" | "error";

/** The part of the OpenCode SDK client the shim logs through. */
export interface AppLogClient {
  app?: {
    log?: (options: {
      body: { service: string; level: Level; message: string; extra?: Record<string, unknown> };
    }) => unknown;
  };
}

export class Logger {
  private readonly seen = new Set<string>();

  constructor(
    private readonly client: AppLogClient | undefined,
    private readonly service = "hookwire",
  ) {}

  /** Writes one entry to OpenCode's app log, silently dropping it on failure. */
  log(level: Level, message: string, extra?: Record<string, unknown>): void {
    try {
      const result = this.client?.app?.log?.({ body: { service: this.service, level, message, extra } });
      if (result && typeof (result as Promise<unknown>).catch === "function") {
        (result as Promise<unknown>).catch(() => {});
      }
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
}
