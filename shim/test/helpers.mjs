// Shared helpers of the shim tests.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const shimDir = join(dirname(fileURLToPath(import.meta.url)), "..");
export const repoDir = join(shimDir, "..");
export const fakeSidecar = join(shimDir, "test", "fixtures", "fake-sidecar.mjs");

export function fixture(name) {
  return JSON.parse(readFileSync(join(shimDir, "test", "fixtures", name), "utf8"));
}

let built;
/**
 * The real sidecar: HOOKWIRE_BIN, else one built from this repo into a temp
 * dir (go build is cached, and a fresh build cannot be stale), else
 * ../bin/hookwire when Go is not there.
 */
export function realSidecar() {
  if (process.env.HOOKWIRE_BIN) return process.env.HOOKWIRE_BIN;
  if (built) return built;
  const dir = mkdtempSync(join(tmpdir(), "hookwire-shim-bin-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  try {
    execFileSync("go", ["build", "-o", join(dir, "hookwire"), "./cmd/hookwire"], { cwd: repoDir, stdio: ["ignore", "ignore", "inherit"] });
    built = join(dir, "hookwire");
  } catch (err) {
    const inRepo = join(repoDir, "bin", "hookwire");
    if (!existsSync(inRepo)) throw new Error(`no sidecar: set HOOKWIRE_BIN, or install Go to build one (${err.message})`);
    built = inRepo;
  }
  return built;
}

/** A stand-in for OpenCode's SDK client that records app.log entries. */
export function fakeClient({ agents, logThrows = false } = {}) {
  const logs = [];
  const client = {
    app: {
      log: (o) => {
        if (logThrows) throw new Error("log broke");
        logs.push(o.body);
        return Promise.resolve(true);
      },
      agents: async () => ({ data: agents ?? [] }),
    },
  };
  return { client, logs };
}

export function scratch() {
  const dir = mkdtempSync(join(tmpdir(), "hookwire-shim-test-"));
  return {
    dir,
    trace: join(dir, "trace.jsonl"),
    log: join(dir, "sidecar.log"),
    records() {
      return existsSync(join(dir, "trace.jsonl"))
        ? readFileSync(join(dir, "trace.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
        : [];
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function waitFor(fn, ms = 5000, step = 20) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, step));
  }
}

export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
