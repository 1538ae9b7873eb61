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
