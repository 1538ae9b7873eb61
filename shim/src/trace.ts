// The debug/inspection path: with HOOKWIRE_SHIM_TRACE=<file> (or the `trace`
// plugin option) every call, reply and process event is appended to <file>
// as one JSON object per line. Tests and the end-to-end script read it.

import { appendFileSync } from "node:fs";

export type TraceRecord = Record<string, unknown> & { ev: string };

export class Trace {
  constructor(readonly file: string) {}

  write(record: TraceRecord): void {
    try {
      appendFileSync(this.file, JSON.stringify({ t: Date.now(), ...record }) + "\n");
    } catch {
      // Tracing is a debugging aid; failures to write it are ignored.
    }
  }
}

/**
 * Writes an `inspect` record: the sidecar's `status` and `sessions.list`
 * right after `after` (initialize, a session.deleted). Both leave at once:
 * the sidecar answers in arrival order, so they show the state right after
 * what was sent before them.
 */
export async function traceInspect(
  trace: Trace,
  sidecar: { pid?: number; request(method: string, params: unknown, deadlineMs: number): Promise<unknown> },
  after: string,
  deadlineMs: number,
  extra?: Record<string, unknown>,
): Promise<void> {
  const [status, sessions] = await Promise.all([
    sidecar.request("status", {}, deadlineMs),
    sidecar.request("sessions.list", {}, deadlineMs),
  ]);
  trace.write({ ev: "inspect", after, pid: sidecar.pid, status, sessions, ...extra });
}
