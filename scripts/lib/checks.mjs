// Shared by the scripts that judge what a real-OpenCode run left in its
// scratch directory (scripts/e2e-opencode-assert.mjs,
// scripts/cache-breaks-report.mjs): reading its files, and the PASS/FAIL
// lines and the closing count.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** A file's text, or "" when it does not exist. */
export const readText = (file) => (existsSync(file) ? readFileSync(file, "utf8") : "");

/** A JSON-lines file's records, skipping blank and unparsable lines; [] when it does not exist. */
export const readJsonl = (file) =>
  readText(file)
    .split("\n")
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });

/** The checks made so far ({name, ok, why}), in order. */
export const checks = [];

/** Records a check and prints its PASS/FAIL line. */
export function check(name, ok, why) {
  checks.push({ name, ok, why });
  console.log(`${ok ? "PASS" : "FAIL"} ${name}${why ? ` — ${why}` : ""}`);
}

/** Prints "<label>: N passed, M failed" and exits, non-zero when a check failed. */
export function finish(label) {
  const failed = checks.filter((c) => !c.ok).length;
  console.log(`${label}: ${checks.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

/**
 * Whether an `opencode run` of DIR (runN.jsonl, requests.replies.jsonl)
 * ended with the final text MARKER. OpenCode 1.15.13's `run --format json`
 * exits before it prints the last step's text after a failed task call,
 * with or without plugins (measured): there the fake LLM having sent that
 * text counts, and `why` says so.
 */
export function finalTextOf(dir, n, marker) {
  if (readText(join(dir, `run${n}.jsonl`)).includes(marker)) return { ok: true };
  const version = readText(join(dir, "..", "opencode-version")).trim() || readText(join(dir, "opencode-version")).trim();
  const sent = readJsonl(join(dir, "requests.replies.jsonl")).some((r) => JSON.stringify(r.answer ?? "").includes(marker));
  if (/^1\.15\./.test(version) && sent) return { ok: true, why: `OpenCode ${version} printed no final text (it does not without plugins either); the fake LLM sent it` };
  return { ok: false };
}
