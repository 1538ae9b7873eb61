// Sidecars outlive nothing: every sidecar of this process is stopped when
// the process exits or is told to (SIGTERM, SIGINT), and a plugin's dispose
// stops its own after the events waiting for it went out.

import type { EventForwarder } from "./forward.js";
import type { Sidecar } from "./sidecar.js";
import type { Trace } from "./trace.js";

/** How long dispose lets events that wait for initialize finish before shutting the sidecar down. */
const DISPOSE_EVENT_WAIT_MS = 3000;

const live = new Set<Sidecar>();
let exitHandlersInstalled = false;

/** Starts a sidecar that the process's exit will stop. */
export function startTracked(sidecar: Sidecar): void {
  live.add(sidecar);
  installExitHandlers();
  sidecar.start();
}

/** The plugin's dispose: the waiting events first (bounded), then a graceful stop. Never throws. */
export async function disposeTracked(sidecar: Sidecar, events: EventForwarder, trace?: Trace): Promise<void> {
  try {
    trace?.write({ ev: "dispose", pid: sidecar.pid, waitingEvents: events.waitingCount });
    await events.drain(DISPOSE_EVENT_WAIT_MS);
    await sidecar.dispose();
  } catch {
    // disposal is best effort
  }
  live.delete(sidecar);
}

/** Stops a sidecar started with startTracked that has no events waiting (the TUI's observer). Never throws. */
export async function stopTracked(sidecar: Sidecar): Promise<void> {
  try {
    await sidecar.dispose();
  } catch {
    // disposal is best effort
  }
  live.delete(sidecar);
}

function installExitHandlers(): void {
  if (exitHandlersInstalled) return;
  exitHandlersInstalled = true;
  const killAll = () => {
    for (const s of live) s.killNow();
  };
  process.on("exit", killAll);
  for (const sig of ["SIGTERM", "SIGINT"] as const) {
    const onSignal = () => {
      killAll();
      process.off(sig, onSignal);
      // Listening to a signal switches off its default action; restore it
      // when nobody else in the process handles the signal.
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}
