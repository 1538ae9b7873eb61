#!/usr/bin/env node
// The install checks of the registry test (scripts/e2e-registry.sh), read
// from its scratch directory: stock/ (the plugin by name in opencode.json,
// two runs) and command/ (`opencode plugin hookwire-opencode`, one run).
// The behaviour checks of stock/ are scripts/e2e-opencode-assert.mjs
// --stock-only. Prints PASS/FAIL per check and exits non-zero when any fails.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { check as record, finalTextOf, finish, readJsonl, readText } from "./lib/checks.mjs";

const work = process.argv[2];
if (!work) {
  console.error("usage: e2e-registry-assert.mjs WORKDIR");
  process.exit(2);
}
const version = readText(join(work, "version")).trim();
const registry = readText(join(work, "registry-url")).trim();
const platformPkg = `hookwire-opencode-${process.platform}-${process.arch}`;
const json = (file) => (existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined);

function check(name, fn) {
  let outcome;
  try {
    outcome = fn();
  } catch (err) {
    outcome = { ok: false, why: `threw: ${err?.stack ?? err}` };
  }
  record(name, outcome.ok, outcome.why);
}

/**
 * Where OpenCode installed the plugin under a home's XDG cache, and what it
 * holds: the directory of a finished npm install (a package-lock.json).
 * OpenCode 1.18.33 installs into packages/<name>@latest; it also starts a
 * second install into packages/<name> that a short `opencode run` may end
 * before it finishes, so that one does not count.
 */
function installed(home) {
  const bun = bunInstalled(home);
  if (bun) return bun;
  const packages = join(home, "xdg", "cache", "opencode", "packages");
  // packages/<name>@latest first: that is the one the run loaded; the
  // second install, when it finished, holds the same versions.
  const dirs = existsSync(packages)
    ? readdirSync(packages)
        .filter((d) => d.startsWith("hookwire-opencode"))
        .sort((a, b) => Number(b.endsWith("@latest")) - Number(a.endsWith("@latest")))
    : [];
  for (const d of dirs) {
    const nm = join(packages, d, "node_modules");
    const plugin = json(join(nm, "hookwire-opencode", "package.json"));
    if (!plugin || !existsSync(join(packages, d, "package-lock.json"))) continue;
    const platform = json(join(nm, platformPkg, "package.json"));
    const lock = json(join(packages, d, "package-lock.json"));
    const resolved = Object.entries(lock?.packages ?? {})
      .filter(([k]) => k.startsWith("node_modules/hookwire-opencode"))
      .map(([k, v]) => [k.replace("node_modules/", ""), v.resolved]);
    return { dir: join(packages, d), nm, plugin, platform, resolved };
  }
  return { dirs };
}

/**
 * OpenCode 1.3 and older: `bun add` into the XDG cache's opencode/ itself,
 * with a bun.lock (JSON with trailing commas) whose packages entries are
 * [name@version, resolved URL, ...].
 */
function bunInstalled(home) {
  const dir = join(home, "xdg", "cache", "opencode");
  const nm = join(dir, "node_modules");
  const plugin = json(join(nm, "hookwire-opencode", "package.json"));
  if (!plugin || !existsSync(join(dir, "bun.lock"))) return undefined;
  const lock = JSON.parse(readFileSync(join(dir, "bun.lock"), "utf8").replace(/,(\s*[}\]])/g, "$1"));
  const resolved = Object.entries(lock?.packages ?? {})
    .filter(([k]) => k.startsWith("hookwire-opencode"))
    .map(([k, v]) => [k, Array.isArray(v) ? v[1] : undefined]);
  return { dir, nm, plugin, platform: json(join(nm, platformPkg, "package.json")), resolved };
}

/** The sidecar spawns and initialize exchanges in a shim trace. */
function sidecarOf(trace) {
  const spawn = trace.find((r) => r.ev === "spawn");
  const init = trace.find((r) => r.ev === "call" && r.method === "initialize");
  const reply = trace.find((r) => r.ev === "reply" && r.method === "initialize");
  return { spawn, client: init?.params?.clientInfo?.version, server: reply?.result?.serverInfo?.version };
}

const stock = join(work, "stock");
const cmd = join(work, "command");

check("R1. the plugin by name: OpenCode installed hookwire-opencode and its platform package from the local registry", () => {
  const config = json(join(stock, "xdg", "config", "opencode", "opencode.json"));
  if (JSON.stringify(config?.plugin) !== JSON.stringify(["hookwire-opencode"])) return { ok: false, why: `opencode.json plugin is ${JSON.stringify(config?.plugin)}` };
  const i = installed(stock);
  if (!i.plugin) return { ok: false, why: `no hookwire-opencode under the XDG cache's opencode/packages (${JSON.stringify(i.dirs)})` };
  if (i.plugin.version !== version) return { ok: false, why: `installed hookwire-opencode ${i.plugin.version}, published ${version}` };
  if (i.platform?.version !== version) return { ok: false, why: `${platformPkg}: ${i.platform ? i.platform.version : "not installed"}` };
  const others = readdirSync(i.nm).filter((d) => d.startsWith("hookwire-opencode-") && d !== platformPkg);
  if (others.length) return { ok: false, why: `other platforms' packages installed too: ${others}` };
  const foreign = i.resolved.filter(([, url]) => !url?.startsWith(registry));
  if (foreign.length || i.resolved.length < 2) return { ok: false, why: `resolved from elsewhere: ${JSON.stringify(i.resolved)}` };
  return { ok: true, why: `${i.dir.split("/").slice(-1)[0]}: hookwire-opencode ${version} and ${platformPkg} ${version} from ${registry}` };
});

check("R2. the sidecar the shim ran is the platform package's binary, in both runs (no HOOKWIRE_BIN, nothing on PATH)", () => {
  const i = installed(stock);
  const want = join(i.nm ?? "?", platformPkg, "bin", process.platform === "win32" ? "hookwire.exe" : "hookwire");
  const spawns = [1, 2].map((n) => sidecarOf(readJsonl(join(stock, `trace-run${n}.jsonl`))).spawn);
  const bad = spawns.filter((s) => s?.binary !== want);
  if (bad.length) return { ok: false, why: `spawned ${JSON.stringify(spawns.map((s) => s?.binary))}, want ${want}` };
  return { ok: true, why: `…/${platformPkg}/bin/hookwire ${JSON.stringify(spawns[1].args)}` };
});

check("R3. plugin and sidecar report the published version (clientInfo, serverInfo); no version mismatch", () => {
  const s = sidecarOf(readJsonl(join(stock, "trace-run1.jsonl")));
  const comparable = (v) => v?.replace(/^v/, "").replace("+", ".");
  if (s.client !== version) return { ok: false, why: `clientInfo.version ${s.client}, published ${version}` };
  if (comparable(s.server) !== version) return { ok: false, why: `serverInfo.version ${s.server}, published ${version}` };
  return { ok: true, why: `plugin ${s.client}, sidecar ${s.server}` };
});

check("R4. the entry OpenCode loaded from the package: ./server (default {id, server, setup}) where it looks there first (1.18), else the main entry", () => {
  const opencode = readText(join(work, "opencode-version")).trim();
  const hosts = [1, 2].map((n) => readJsonl(join(stock, `trace-run${n}.jsonl`)).find((r) => r.ev === "host"));
  if (hosts.some((h) => !h)) return { ok: false, why: "no host record in a run's trace" };
  const entries = [...new Set(hosts.map((h) => h.entry))];
  if (entries.length !== 1) return { ok: false, why: `entries differ between runs: ${entries}` };
  const [major, minor] = opencode.split(".").map(Number);
  if (major === 1 && minor >= 18 && entries[0] !== "server") return { ok: false, why: `OpenCode ${opencode} loaded ${entries[0]}, want server` };
  const what = entries[0] === "server" ? "the ./server subpath (dist/server.js) and called server()" : "the main entry (dist/index.js)";
  return { ok: true, why: `OpenCode ${opencode} loaded ${what}${hosts[0].host?.version ? `; the shim read its version ${hosts[0].host.version}` : ""}` };
});

check("R5. one OpenCode process, one sidecar: run 1 (over a minute on 1.17+) had exactly one hookwire sidecar throughout", () => {
  const opencode = readText(join(work, "opencode-version")).trim();
  const [major, minor] = opencode.split(".").map(Number);
  const late = major > 1 || (major === 1 && minor >= 17);
  const ms = Number(readText(join(stock, "run1.end"))) - Number(readText(join(stock, "run1.start")));
  if (late && !(ms > 60_000)) return { ok: false, why: `run 1 lasted ${ms} ms; it must last over a minute (FAKELLM_HOLD_FINAL_MS)` };
  const trace = readJsonl(join(stock, "trace-run1.jsonl"));
  const spawns = trace.filter((r) => r.ev === "spawn");
  if (spawns.length !== 1) return { ok: false, why: `the shim spawned ${spawns.length} sidecars: ${JSON.stringify(spawns.map((r) => r.pid))}` };
  const setups = trace.filter((r) => r.ev === "host" && r.how === "setup");
  if (setups.length) return { ok: false, why: `setup built a second instance: ${JSON.stringify(setups)}` };
  // Whether OpenCode called setup in this run (1.18.33 does for a plugin its
  // v2 core loads: the `plugins` key or a {plugin,plugins}/ file, docs/OPENCODE.md);
  // either way there must be no second instance.
  const skipped = trace.filter((r) => r.ev === "setup-skipped");
  if (skipped.length > 1) return { ok: false, why: `${skipped.length} setup-skipped records` };
  // The samples of the sidecars running from this home's plugin cache, once a second.
  const samples = readText(join(stock, "sidecars-run1.txt"))
    .split("\n")
    .filter(Boolean)
    .map((l) => l.trim().split(/\s+/).slice(1));
  const running = samples.filter((s) => s.length > 0);
  const many = running.filter((s) => s.length > 1);
  if (many.length) return { ok: false, why: `${many.length} samples saw more than one sidecar: ${JSON.stringify(many[0])}` };
  const distinct = [...new Set(running.map((s) => s[0]))];
  // Before 1.17 run 1 takes a few seconds, and its sidecar can live between
  // two one-second samples: there the trace's one spawn is the evidence, and
  // the samples only must not see another.
  if (distinct.length === 0 && !late)
    return { ok: true, why: `run 1 lasted ${Math.round(ms / 1000)} s (OpenCode ${opencode}: no hold); the shim spawned one sidecar (${spawns[0].pid}), none other sampled in ${samples.length} one-second samples` };
  if (distinct.length !== 1) return { ok: false, why: `sidecars seen (pid:ppid): ${JSON.stringify(distinct)} in ${samples.length} samples` };
  if (String(spawns[0].pid) !== distinct[0].split(":")[0]) return { ok: false, why: `sampled ${distinct[0]}, the trace spawned ${spawns[0].pid}` };
  return {
    ok: true,
    why: `run 1 lasted ${Math.round(ms / 1000)} s; sidecar ${distinct[0]} (pid:OpenCode's pid) in ${running.length} of ${samples.length} one-second samples, no other; ${skipped.length ? `setup called at +${Math.round((skipped[0].t - Number(readText(join(stock, "run1.start")))) / 1000)} s with keys ${skipped[0].keys.join(",")}, skipped` : "setup not called"}`,
  };
});

/** What `npx hookwire-opencode doctor` printed in stock/ as NAME: exit status, lines, the binary and activity lines. */
function doctorRun(name) {
  const out = readText(join(stock, `${name}.out`));
  const lines = out.split("\n");
  const line = (what) => lines.find((l) => new RegExp(`^\\S+\\s+${what}\\s{2}`).test(l));
  return { rc: readText(join(stock, `${name}.rc`)).trim(), out, err: readText(join(stock, `${name}.err`)), lines, line };
}

/** The binary line names the platform package's binary that npx installed (not one of OpenCode's cache, none on PATH). */
function ranPlatformBinary(d) {
  const bin = d.line("binary") ?? "";
  const want = new RegExp(`/_npx/[^/]+/node_modules/${platformPkg}/bin/hookwire: hookwire `);
  return want.test(bin) ? undefined : `binary line: ${JSON.stringify(bin)}`;
}

check("D1. npx hookwire-opencode doctor before OpenCode's first run: it runs (npx installed the package from the local registry, its bin the platform binary); activity: installed but idle", () => {
  const d = doctorRun("doctor-before");
  if (d.rc !== "0") return { ok: false, why: `exited ${d.rc || "?"}: ${d.err.slice(-400)}${d.out.slice(-600)}` };
  const bad = ranPlatformBinary(d);
  if (bad) return { ok: false, why: bad };
  const activity = d.line("activity") ?? "";
  if (!/^-\s+activity\s+installed but idle/.test(activity)) return { ok: false, why: `activity line: ${JSON.stringify(activity)}` };
  return { ok: true, why: activity.replace(/\s+/g, " ").slice(0, 120) };
});

check("D2. npx hookwire-opencode doctor after the runs (build delegated): no failure, OpenCode's version from its package.json, the plugin OpenCode installed matches, activity: working", () => {
  const d = doctorRun("doctor-after");
  if (d.rc !== "0") return { ok: false, why: `exited ${d.rc || "?"}: ${d.err.slice(-400)}${d.out.slice(-600)}` };
  const bad = ranPlatformBinary(d);
  if (bad) return { ok: false, why: bad };
  const fails = d.lines.filter((l) => l.startsWith("FAIL"));
  if (fails.length) return { ok: false, why: fails.join("\n") };
  const opencode = readText(join(work, "opencode-version")).trim();
  const oc = d.line("opencode") ?? "";
  if (!oc.includes(`OpenCode ${opencode}`) || !/version from \S+\/opencode-ai\/package\.json/.test(oc)) return { ok: false, why: `opencode line: ${JSON.stringify(oc)}` };
  const pv = d.line("plugin version") ?? "";
  if (!/^ok\s/.test(pv) || !pv.includes(`${"hookwire-opencode"} ${version}`)) return { ok: false, why: `plugin version line: ${JSON.stringify(pv)}` };
  const activity = d.line("activity") ?? "";
  if (!/^ok\s+activity\s+working: \d+ alias(es)? made under \d+ parent sessions?: .*the latest task call at /.test(activity))
    return { ok: false, why: `activity line: ${JSON.stringify(activity)}` };
  return { ok: true, why: activity.replace(/\s+/g, " ").slice(0, 200) };
});

const skipped = readText(join(cmd, "skipped")).trim();
if (skipped) console.log(`SKIP P1-P2: ${skipped}`);
else check("P1. opencode plugin hookwire-opencode: exit 0, the project's config gets the plugin, the packages come from the local registry", () => {
  const rc = readText(join(cmd, "plugin.rc")).trim();
  if (rc !== "0") return { ok: false, why: `exited ${rc || "?"}: ${readText(join(cmd, "plugin.err")).slice(-400)}` };
  const config = json(join(cmd, "plugin-config.json"));
  if (!JSON.stringify(config?.plugin ?? []).includes("hookwire-opencode")) return { ok: false, why: `project .opencode/opencode.json: ${JSON.stringify(config)}` };
  const i = installed(cmd);
  if (i.plugin?.version !== version || i.platform?.version !== version)
    return { ok: false, why: `installed ${i.plugin?.version} / ${platformPkg} ${i.platform?.version}, published ${version}` };
  const foreign = i.resolved.filter(([, url]) => !url?.startsWith(registry));
  if (foreign.length) return { ok: false, why: `resolved from elsewhere: ${JSON.stringify(foreign)}` };
  return { ok: true, why: `.opencode/opencode.json plugin ${JSON.stringify(config.plugin)}; hookwire-opencode and ${platformPkg} ${version}` };
});

if (!skipped) check("P2. a run in that project loads it: the platform package's sidecar serves build's hooks and the run completes", () => {
  const rc = readText(join(cmd, "run1.rc")).trim();
  const final = finalTextOf(cmd, 1, "BUILD_RUN1_DONE");
  if (rc !== "0" || !final.ok) return { ok: false, why: `run exited ${rc || "?"}${rc === "0" ? " without its final text" : ""}; see command/run1.err` };
  const trace = readJsonl(join(cmd, "trace-run1.jsonl"));
  const s = sidecarOf(trace);
  if (!s.spawn?.binary?.endsWith(join(platformPkg, "bin", "hookwire"))) return { ok: false, why: `spawned ${s.spawn?.binary}` };
  const served = trace.filter((r) => r.ev === "reply" && r.ok && r.method !== "initialize").length;
  if (served === 0) return { ok: false, why: "no hook call answered" };
  return { ok: true, why: `${served} hook calls answered by …/${platformPkg}/bin/hookwire` };
});

// The TUI (tui/): hookwire's sidebar section on OpenCode's real screen.
const tui = join(work, "tui");
const tuiSkipped = readText(join(tui, "skipped")).trim();
const screen = (name) => readText(join(tui, `screen-${name}.txt`));
const secs = (name) => readText(join(tui, `screen-${name}.secs`)).trim();
const at = (name) => Number(readText(join(tui, `screen-${name}.at`)).trim() || readText(join(tui, name)).trim());
const side = (name) => screen(name).split("\n").map((l) => l.slice(178)).join("\n");
if (tuiSkipped) console.log(`SKIP T1-T12: ${tuiSkipped}`);
else {
  check("T1. the TUI is up with the package in opencode.json and tui.json", () => {
    const s = screen("ready");
    return s.includes("ctrl+p") ? { ok: true, why: `ready after ${secs("ready")} s` } : { ok: false, why: `screen: ${s.slice(-600)}` };
  });
  check("T2. a misspelt plugin option is named on screen within 15 s of the TUI being ready", () => {
    const s = screen("typo");
    const after = Number(readText(join(tui, "typo-after-ready.secs")).trim());
    if (!s.includes("cacheStabel")) return { ok: false, why: `not on screen: ${s.slice(-800)}` };
    if (!(after <= 15)) return { ok: false, why: `shown ${after} s after ready` };
    return { ok: true, why: `on screen ${after} s after ready` };
  });
  check("T3. after build delegates, the sidebar shows exp-1 with its label and gen-1", () => {
    const s = screen("run1");
    if (!/exp-1/.test(s) || !/gen-1/.test(s)) return { ok: false, why: `screen: ${s}` };
    if (!s.includes("Look around")) return { ok: false, why: `exp-1's label "Look around" not on screen: ${s}` };
    return { ok: true, why: `within ${secs("run1")} s of the prompt` };
  });
  check("T4. after a second prompt resumes exp-1, exp-1 is shown and not as running; no JSON or log lines from the plugin on any screen", () => {
    const s = screen("run2");
    if (!/exp-1\*? explore done/.test(s)) return { ok: false, why: `screen: ${s}` };
    for (const name of ["ready", "typo", "run1", "run2", "slow-task", "slow-running", "slow-stopped", "six", "limit", "limit-settled", "narrow-ready", "narrow-jump", "narrow-task", "narrow-stop", "narrow-stopped"]) {
      const t = screen(name);
      const stray = t.split("\n").find((l) => /^\s*\{"/.test(l) || /"level":|hookwire shim:|\[hookwire\]/.test(l));
      if (stray) return { ok: false, why: `${name}: ${stray}` };
    }
    return { ok: true, why: "exp-1 done after the resume; screens clean" };
  });
  check("T5. a new subagent shows as running with its label within 5 s of OpenCode showing its task running", () => {
    if (!at("slow-task")) return { ok: false, why: `OpenCode never showed the task: ${screen("slow-task").slice(-1500)}` };
    if (!at("slow-running")) return { ok: false, why: `not running in the section: ${side("slow-running")}` };
    const lag = (at("slow-running") - at("slow-task")) / 1000;
    return lag <= 5 ? { ok: true, why: `${lag.toFixed(1)} s after OpenCode showed it` } : { ok: false, why: `${lag.toFixed(1)} s after OpenCode showed it` };
  });
  check("T6. after esc esc, within 8 s nothing says running and the subagent says cancelled or interrupted", () => {
    if (!at("slow-stopped")) return { ok: false, why: `section: ${side("slow-stopped")}` };
    const lag = (at("slow-stopped") - at("esc.at")) / 1000;
    return lag <= 8 ? { ok: true, why: `${lag.toFixed(1)} s after esc esc` } : { ok: false, why: `${lag.toFixed(1)} s after esc esc` };
  });
  check("T7. six subagents in one session are all listed", () => {
    const sd = side("six");
    const missing = [1, 2, 3, 4, 5, 6].filter((i) => !sd.includes(`Six part ${i}`));
    return missing.length === 0 ? { ok: true, why: "Six part 1-6 in the section" } : { ok: false, why: `missing ${missing.join(", ")}: ${sd}` };
  });
  check("T8. at 100x40, in a TUI process that never showed the sidebar, the palette's jump command lists the session's subagents", () => {
    const s = screen("narrow-jump");
    const missing = [1, 2, 3, 4, 5, 6].filter((i) => !s.includes(`Six part ${i}`));
    if (!s.includes("hookwire: subagents") || missing.length) return { ok: false, why: `missing ${missing.join(", ")}: ${s}` };
    return { ok: true, why: `listed within ${secs("narrow-jump")} s` };
  });
  check("T9. at 100x40 the stop command stops a running subagent (its parent's turn goes on at once, not after the subagent's minute)", () => {
    if (!at("narrow-stop")) return { ok: false, why: `no stop dialog: ${screen("narrow-stop")}` };
    if (!at("narrow-stopped")) return { ok: false, why: `the turn did not go on: ${screen("narrow-stopped")}` };
    const lag = (at("narrow-stopped") - at("stop.at")) / 1000;
    return lag < 30 ? { ok: true, why: `the turn finished ${lag.toFixed(1)} s after the stop` } : { ok: false, why: `${lag.toFixed(1)} s` };
  });
}

/**
 * hookwire's section in a sidebar (the `side` columns of a screen): the
 * parent's figure lines and the rows, each with its detail lines, as drawn.
 */
function sectionOf(sideText) {
  const lines = sideText.split("\n").map((l) => l.trim());
  const head = lines.findIndex((l) => /^hookwire\b/.test(l));
  const section = [];
  for (let i = head; i >= 0 && i < lines.length && lines[i] !== ""; i++) section.push(lines[i]);
  const rowRe = /^([~↻✓✗.·-]) (?:(\S+-\d+)\*? )?(explorer|explore|general) (running|retrying|done|failed|cancelled|interrupted|idle)\b/;
  const rows = [];
  for (const l of section) {
    const m = l.match(rowRe);
    if (m) rows.push({ line: l, alias: m[2], agent: m[3], state: m[4], details: [] });
    else if (rows.length && !/^\+\d+ more/.test(l)) rows.at(-1).details.push(l);
  }
  return { section, rows, own: section.find((l) => l.startsWith("this session")), total: section.find((l) => l.startsWith("with subagents")) };
}

/** The cost and tokens a line shows ("... $0.0400 30 tok", "fake-model 30 tok $0.0400"), with the places the cost was rounded to. */
function figuresOf(line) {
  const cost = line?.match(/\$(\d+(?:\.(\d+))?)/);
  const tok = line?.match(/(?:^|\s)(\d+(?:\.\d+)?)([kM]?) tok\b/);
  return {
    cost: cost ? Number(cost[1]) : undefined,
    places: cost ? (cost[2] ?? "").length : 0,
    tokens: tok ? Number(tok[1]) * (tok[2] === "k" ? 1e3 : tok[2] === "M" ? 1e6 : 1) : undefined,
    tokenText: tok ? `${tok[1]}${tok[2]}` : undefined,
  };
}

/** The section's short token count (tuimodel.ts tokenWords), to compare an export's sum as the screen rounds it. */
function tokenWords(n) {
  if (n < 1000) return `${Math.round(n)}`;
  if (n < 10_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
}

/** A session's figures as `opencode export` gives them: the sums over its assistant messages. */
function exportFigures(file) {
  const e = json(file);
  if (!e) return undefined;
  let cost = 0;
  let tokens = 0;
  let messages = 0;
  for (const m of e.messages ?? []) {
    if (m.info?.role !== "assistant") continue;
    messages++;
    cost += m.info.cost ?? 0;
    const t = m.info.tokens ?? {};
    tokens += (t.input ?? 0) + (t.output ?? 0) + (t.reasoning ?? 0) + (t.cache?.read ?? 0) + (t.cache?.write ?? 0);
  }
  return { id: e.info?.id, title: e.info?.title ?? "", cost, tokens, messages };
}

/** Whether a figure line shows these figures: tokens as the section rounds them, the cost within its rounding. */
function sameFigures(shown, want) {
  const bad = [];
  if (shown.tokenText === undefined) bad.push("no tokens shown");
  else if (shown.tokenText !== tokenWords(want.tokens)) bad.push(`tokens ${shown.tokenText} on screen, ${want.tokens} exported`);
  if (shown.cost === undefined) bad.push("no cost shown");
  else if (Math.abs(shown.cost - want.cost) > 0.5 * 10 ** -shown.places + 1e-9) bad.push(`cost $${shown.cost} on screen, $${want.cost} exported`);
  return bad;
}

if (!tuiSkipped) {
  check("T10. a subagent rescued from a 429 by its fallback shows one switch, whose text says rate-limit (never cooling until)", () => {
    const sd = side("limit-settled");
    if (!at("limit")) return { ok: false, why: `the explorer was not shown done with a switch: ${side("limit")}` };
    const { rows, section } = sectionOf(sd);
    const row = rows.find((r) => r.agent === "explorer");
    if (!row) return { ok: false, why: `no explorer row: ${section.join(" | ")}` };
    const switches = row.details.filter((l) => l.startsWith("↪"));
    if (/cooling/i.test(sd)) return { ok: false, why: `"cooling" on screen: ${section.join(" | ")}` };
    if (switches.length !== 1) return { ok: false, why: `${switches.length} switch lines: ${[row.line, ...row.details].join(" | ")}` };
    if (!/^↪ from fake-model-3: rate-limit$/.test(switches[0])) return { ok: false, why: `switch line ${JSON.stringify(switches[0])}` };
    if (row.state !== "done") return { ok: false, why: `explorer ${row.state}` };
    const fig = row.details.find((l) => / tok\b/.test(l)) ?? "";
    if (!fig.startsWith("fake-model-2 ")) return { ok: false, why: `the explorer's model line: ${JSON.stringify(fig)}` };
    return { ok: true, why: `${[row.line, ...row.details].join(" | ")} (${secs("limit")} s after the prompt)` };
  });

  check("T11. finished subagents' figures on screen equal `opencode export`'s, and 'with subagents' equals the parent's own plus its children's", () => {
    const sessions = json(join(tui, "sessions.json"));
    if (!sessions) return { ok: false, why: `no session tree: ${readText(join(tui, "sessions.err"))}` };
    const parentID = sessions.find((r) => sessions.some((c) => c.parent_id === r.id && /^Limited look/.test(c.title)))?.id;
    if (!parentID) return { ok: false, why: `no parent of the explorer among ${sessions.length} sessions` };
    const parent = exportFigures(join(tui, `export-${parentID}.json`));
    const children = sessions.filter((r) => r.parent_id === parentID).map((r) => exportFigures(join(tui, `export-${r.id}.json`)) ?? { id: r.id, missing: true });
    const missing = children.filter((c) => c.missing);
    if (!parent || missing.length) return { ok: false, why: `no export of ${parent ? missing.map((c) => c.id).join(", ") : parentID}` };
    if (!(parent.cost > 0)) return { ok: false, why: `the parent's exported cost is ${parent.cost}: the models have no price` };
    const { rows, own, total, section } = sectionOf(side("limit-settled"));
    const out = [];
    const bad = [];
    // Each child to its row: by label (the child's title is "<label> (@<agent> subagent)"), else the one row of its agent left.
    const labelOf = (c) => c.title.replace(/ \(@[^)]*subagent\)$/, "");
    const agentOf = (c) => c.title.match(/\(@([^)\s]+) subagent\)$/)?.[1];
    const free = new Set(rows);
    const pairs = [];
    for (const c of children) {
      const r = [...free].find((r) => r.details[0] && labelOf(c).startsWith(r.details[0].replace(/…$/, "")) && r.agent === agentOf(c));
      if (r) (free.delete(r), pairs.push([c, r]));
    }
    for (const c of children.filter((c) => !pairs.some(([p]) => p === c))) {
      const same = [...free].filter((r) => r.agent === agentOf(c));
      if (same.length === 1) (free.delete(same[0]), pairs.push([c, same[0]]));
      else bad.push(`no row for ${c.id} (${c.title})`);
    }
    let compared = 0;
    for (const [c, r] of pairs) {
      if (r.state === "running" || r.state === "retrying") {
        bad.push(`${r.line}: not finished`);
        continue;
      }
      const line = r.details.find((l) => / tok\b|\$\d/.test(l));
      if (!line) {
        if (c.tokens || c.cost) bad.push(`${r.line}: no figures on screen, exported ${c.tokens} tok $${c.cost}`);
        else out.push(`${r.alias ?? r.agent} ${r.state}: none shown, 0 exported`);
        continue;
      }
      const diff = sameFigures(figuresOf(line), c);
      if (diff.length) bad.push(`${r.line} (${c.id}): ${diff.join("; ")}`);
      else (compared++, out.push(`${r.alias ?? r.agent}: "${line}" = export ${c.tokens} tok $${+c.cost.toFixed(6)}`));
    }
    const sum = children.reduce((a, c) => ({ cost: a.cost + c.cost, tokens: a.tokens + c.tokens }), { cost: 0, tokens: 0 });
    const all = { cost: parent.cost + sum.cost, tokens: parent.tokens + sum.tokens };
    if (!own) bad.push("no 'this session' line");
    else {
      const diff = sameFigures(figuresOf(own), parent);
      if (diff.length) bad.push(`"${own}": ${diff.join("; ")}`);
    }
    if (!total) bad.push("no 'with subagents' line");
    else {
      const diff = sameFigures(figuresOf(total), all);
      if (diff.length) bad.push(`"${total}": ${diff.join("; ")}`);
    }
    if (compared < 2) bad.push(`only ${compared} finished subagents with figures compared`);
    const figures = `"${own}" = export ${parent.tokens} tok $${+parent.cost.toFixed(6)}; "${total}" = own + ${children.length} children = ${all.tokens} tok $${+all.cost.toFixed(6)}; ${out.join("; ")}`;
    return bad.length ? { ok: false, why: `${bad.join("\n  ")}\n  section: ${section.join(" | ")}\n  ${figures}` } : { ok: true, why: figures };
  });
}

if (!tuiSkipped)
  check("T12. each subagent's context is shown against its model's window as OpenCode knows it (the fake models': 128000)", () => {
    const { rows, section } = sectionOf(side("limit-settled"));
    const ctx = rows.map((r) => [r, r.details.find((l) => /^ctx /.test(l))]).filter(([, l]) => l);
    const bad = ctx.filter(([, l]) => !/^ctx \d[\d.]*[kM]?\/128k\b/.test(l));
    if (ctx.length === 0) return { ok: false, why: `no ctx line: ${section.join(" | ")}` };
    if (bad.length) return { ok: false, why: bad.map(([r, l]) => `${r.alias ?? r.agent}: ${l}`).join("; ") };
    return { ok: true, why: ctx.map(([r, l]) => `${r.alias ?? r.agent}: ${l}`).join("; ") };
  });

// Not a check: what the registry had to fetch from its uplink.
{
  const storage = join(work, "registry", "storage");
  const proxied = existsSync(storage) ? readdirSync(storage).filter((d) => !d.startsWith("hookwire-opencode") && !d.startsWith(".")) : [];
  console.log(`info: the registry proxied ${proxied.length} package(s) from its uplink${proxied.length ? `: ${proxied.join(", ")}` : ""}`);
}

finish("e2e-registry");
