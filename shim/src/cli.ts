// The `hookwire` command by the package's name: `npx hookwire-opencode
// doctor` (or `sessions`, `forget`, `observe`, ...), and `hookwire` after
// `npm install -g hookwire-opencode`. It runs the sidecar binary of the
// platform package npm installed beside this package, found as the shim
// finds it (binary.ts platformBinary), with the same arguments, stdio and
// exit status. No PATH lookup: a `hookwire` on PATH may be this very script.
// The command itself is bin.ts (the package's `bin`).

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { constants } from "node:os";
import { platformBinary, platformPackage } from "./binary.js";
import { PLUGIN_PACKAGE } from "./contract.gen.js";

/**
 * Runs the platform binary with args; resolves to the exit status to
 * leave with: the binary's, or 128+N when signal N ended it (which the
 * caller raises again where it can).
 */
export function runPlatformBinary(
  args: string[],
  from: string | URL = import.meta.url,
  stderr: (line: string) => void = (l) => process.stderr.write(l + "\n"),
): Promise<{ code: number; signal?: NodeJS.Signals }> {
  const bin = platformBinary(from);
  if (!bin || !existsSync(bin)) {
    stderr(
      `${PLUGIN_PACKAGE}: the sidecar binary is not installed: ${platformPackage()} ` +
        (bin ? `has no ${bin}` : `is not installed beside ${PLUGIN_PACKAGE}`) +
        ` (npm installs it as an optional dependency: reinstall without --omit=optional or --no-optional; ` +
        `for a platform with no such package, build hookwire with Go).`,
    );
    return Promise.resolve({ code: 1 });
  }
  return new Promise((resolve) => {
    const child = spawn(bin, args, { stdio: "inherit", windowsHide: true });
    // Ctrl-C reaches the child through the terminal's process group; a
    // signal sent to this process alone is passed on.
    const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
    const handlers = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((sig) => {
      const h = forward(sig);
      process.on(sig, h);
      return [sig, h] as const;
    });
    const done = (r: { code: number; signal?: NodeJS.Signals }) => {
      for (const [sig, h] of handlers) process.off(sig, h);
      resolve(r);
    };
    child.on("error", (err) => {
      stderr(`${PLUGIN_PACKAGE}: could not run ${bin}: ${err.message}`);
      done({ code: 1 });
    });
    // A signal death is reported as a shell reports it, 128+N.
    child.on("exit", (code, signal) => done(signal ? { code: 128 + (constants.signals[signal] ?? 0), signal } : { code: code ?? 1 }));
  });
}
