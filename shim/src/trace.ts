// The debug/inspection path: with HOOKWIRE_SHIM_TRACE=<file> (or the `trace`
// plugin option) every call, reply and process event is appended to <file>
// as one JSON object per line. Tests and the end-to-end script read it.

import { closeSync, constants, fstatSync, openSync, writeSync } from "node:fs";

export type TraceRecord = Record<string, unknown> & { ev: string };

export class Trace {
  constructor(readonly file: string) {}

  write(record: TraceRecord): void {
    try {
      const fd = openAppendNoFollow(this.file);
      try {
        writeSync(fd, JSON.stringify({ t: Date.now(), ...record }) + "\n");
      } finally {
        closeSync(fd);
      }
    } catch {
      // Tracing is a debugging aid; failures to write it are ignored.
    }
  }
}

/**
 * Opens file for appending (created 0600) without following a symbolic
 * link at it, and refuses anything but a regular file without waiting on
 * it (a FIFO): a link planted in a checkout where a trace or log is
 * written must not have it appended to whatever it points at. Throws when
 * it will not open. Windows has no O_NOFOLLOW: there only the type check
 * applies.
 */
export function openAppendNoFollow(file: string): number {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
  const fd = openSync(file, flags, 0o600);
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${file} is not a regular file`);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
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
