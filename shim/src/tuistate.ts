// What keeps the sidecar from writing its state, for the TUI section
// (tui.ts): no OpenCode libraries here, so tests load it directly.

import { access, constants } from "node:fs/promises";
import { dirname } from "node:path";
import type { ShimSettings } from "./options.js";

/**
 * What keeps the sidecar from writing its state, as the sidecar will find
 * it: the state option off (memory only), or a file or directory it cannot
 * write (read-only). Asked of the file system off the render path.
 */
export async function stateProblemOf(settings: Pick<ShimSettings, "stateSource">, file: string | undefined): Promise<string> {
  if (settings.stateSource === "off") return "memory only";
  if (!file) return "";
  for (const p of [file, dirname(file)]) {
    try {
      await access(p, constants.W_OK);
      return "";
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") continue; // not made yet: its directory decides
      if (code === "EROFS" || code === "EACCES" || code === "EPERM") return "state read-only";
      return "";
    }
  }
  return "";
}

