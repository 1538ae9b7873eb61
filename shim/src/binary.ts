// The sidecar binary as the npm packages ship it, and whether it belongs
// with this plugin.
//
// `hookwire-opencode` lists one package per platform as an optional
// dependency (hookwire-opencode-linux-x64, ...-darwin-arm64, ...-win32-x64),
// each holding only bin/hookwire[.exe], the pattern of esbuild and OpenCode
// itself: npm installs the one whose os/cpu match. All of them carry the
// plugin's version, and the binary is stamped with it (`make dist`).

import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PLATFORMS, PLUGIN_PACKAGE } from "./contract.gen.js";
import type { ServerInfo } from "./protocol.gen.js";

/**
 * The platform package's name for this platform, from the contract's
 * list; for a platform it does not list, the name such a package would
 * have (hookwire-opencode-<process.platform>-<process.arch>), so a message
 * can say what is missing.
 */
export function platformPackage(platform: string = process.platform, arch: string = process.arch): string {
  return PLATFORMS.find((p) => p.os === platform && p.cpu === arch)?.package ?? `${PLUGIN_PACKAGE}-${platform}-${arch}`;
}

/**
 * The binary of the platform package installed with this plugin; null when
 * it is not installed (another platform, or optional dependencies left
 * out). It is looked for only in the plugin's own install tree, the two
 * places npm, pnpm and OpenCode put a dependency: nested in the plugin's
 * node_modules, or beside the plugin in the node_modules that holds it.
 * Node's own resolution would go on up the tree, so a package planted in
 * any parent node_modules (/tmp/node_modules, a world-writable ancestor)
 * would run as hookwire.
 */
export function platformBinary(
  from: string | URL = import.meta.url,
  platform: string = process.platform,
  arch: string = process.arch,
): string | null {
  const name = platformPackage(platform, arch);
  const root = pluginRoot(from instanceof URL || String(from).startsWith("file:") ? fileURLToPath(from) : String(from));
  if (!root) return null;
  const places = [join(root, "node_modules", name)];
  if (basename(dirname(root)) === "node_modules") places.push(join(dirname(root), name));
  for (const dir of places) {
    if (existsSync(join(dir, "package.json"))) return join(dir, "bin", platform === "win32" ? "hookwire.exe" : "hookwire");
  }
  return null;
}

/**
 * The directory of the plugin's package.json above the module at file (its
 * dist/ or src/), at most three levels up; null when there is none.
 */
function pluginRoot(file: string): string | null {
  let dir = dirname(file);
  for (let i = 0; i < 3; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      if (pkg?.name === PLUGIN_PACKAGE) return dir;
    } catch {
      // no package.json here, or not JSON: look one level up
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return null;
}

/**
 * A version as both sides compare it: the Go side reports `v1.2.3` (go
 * install, git tags) and build metadata (`0.0.0-dev+gabc1234`); npm versions
 * have no leading v, and npm drops build metadata, so `make dist` turns `+`
 * into `.` (scripts/version.sh --npm does the same).
 */
export function comparableVersion(v: string): string {
  return v.trim().replace(/^v/, "").replace("+", ".");
}

/** The version an unstamped plugin reports: run from a checkout, not installed from npm. */
export const UNSTAMPED_VERSION = "0.0.0-dev";

/**
 * Why the plugin and the sidecar it started do not belong together, or
 * undefined when they do or cannot be compared: a plugin run from a checkout
 * (its package.json says 0.0.0-dev) or a sidecar built outside make
 * (`devel...`, no version stamped) pairs with anything.
 */
export function versionMismatch(pluginVersion: string, serverInfo: ServerInfo | null | undefined, binary: string): string | undefined {
  const version: unknown = serverInfo?.version;
  if (typeof version !== "string" || version === "") return undefined;
  if (pluginVersion === UNSTAMPED_VERSION || version.startsWith("devel")) return undefined;
  if (comparableVersion(version) === comparableVersion(pluginVersion)) return undefined;
  return (
    `hookwire: version mismatch: the plugin hookwire-opencode is ${pluginVersion} but the sidecar ${binary} is ${version}; ` +
    `hooks still run, but install the same version of both (reinstall hookwire-opencode, or point "binary" / HOOKWIRE_BIN at a matching hookwire)`
  );
}

/** What `binary --version` prints, first line; undefined when it fails or takes over 2 s. */
export function binaryVersion(binary: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  return new Promise((resolve) => {
    try {
      const child = execFile(binary, ["--version"], { timeout: 2000, windowsHide: true, env }, (err, stdout) => {
        const line = String(stdout ?? "").split("\n")[0].trim();
        resolve(err || !line ? undefined : line.replace(/^hookwire\s+/, ""));
      });
      child.stdin?.end();
    } catch {
      resolve(undefined);
    }
  });
}

/**
 * The message for a sidecar that refused initialize. A refusal of the
 * protocol version means plugin and binary come from releases too far
 * apart: it names both versions (the binary's from `--version`) and what to
 * do. Any other refusal (a bad config) is passed on as it is.
 */
export async function rejectionMessage(
  detail: string,
  binary: string,
  pluginVersion: string,
  protocol: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  if (!/protocolVersion/.test(detail)) return `hookwire: initialize rejected, hooks pass through: ${detail}`;
  const version = (await binaryVersion(binary, env)) ?? "unknown (it has no --version)";
  return (
    `hookwire: the sidecar ${binary} (version ${version}) does not speak protocol ${protocol}, ` +
    `which the plugin hookwire-opencode ${pluginVersion} needs; hooks pass through. ` +
    `Install the same version of both (reinstall hookwire-opencode, or point "binary" / HOOKWIRE_BIN at a matching hookwire). ` +
    `The sidecar said: ${detail}`
  );
}
