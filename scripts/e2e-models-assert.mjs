#!/usr/bin/env node
// The checks of the model-fallback end-to-end test (scripts/e2e-models.sh),
// read from its scratch directory: base/ (OpenCode alone) and hw/ (with
// hookwire), each with requests.jsonl (every request the fake LLM got),
// run.jsonl / run.rc; hw/ also trace-run.jsonl (the shim's trace),
// fakellm-events.jsonl, sidecar.log and sessions.txt (`hookwire sessions`
// after the run). Prints what OpenCode alone did, PASS/FAIL per check, and
// exits non-zero when any fails.

import { join } from "node:path";
import { textOf } from "./fakellm/common.mjs";
import { check, finish, readJsonl, readText } from "./lib/checks.mjs";

const work = process.argv[2];
if (!work) {
  console.error("usage: e2e-models-assert.mjs WORKDIR");
  process.exit(2);
}

/** The task calls of the orchestrator's last request, with their results. */
function taskResults(requests) {
  const last = requests.filter((r) => r.agent === "orchestrator").at(-1)?.body;
  if (!last) return [];
  const results = new Map(last.messages.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, textOf(m.content)]));
  return last.messages
    .filter((m) => m.role === "assistant" && Array.isArray(m.tool_calls))
    .flatMap((m) => m.tool_calls)
    .filter((tc) => tc.function?.name === "task")
    .map((tc) => ({ agent: JSON.parse(tc.function.arguments).subagent_type, result: results.get(tc.id) ?? "" }));
}

const modelsOf = (requests, agent) => [...new Set(requests.filter((r) => r.agent === agent).map((r) => r.body.model))];

// --- OpenCode alone ---------------------------------------------------------------
const base = readJsonl(join(work, "base", "requests.jsonl"));
const baseTasks = taskResults(base);
const baseExplorer = baseTasks.find((t) => t.agent === "explorer");
console.log("OpenCode 1.18.33 alone, explorer configured on anthropic/claude-sonnet-4-6 (not connected):");
console.log(`  explorer's requests to the LLM: ${base.filter((r) => r.agent === "explorer").length}, models ${JSON.stringify(modelsOf(base, "explorer"))}`);
console.log(`  the orchestrator's task result for explorer: ${JSON.stringify((baseExplorer?.result ?? "(none)").slice(0, 200))}`);
check("B1 without hookwire, the explorer task fails: no explorer request reaches the LLM, the task result names the missing model",
  base.filter((r) => r.agent === "explorer").length === 0 && /Model not found: anthropic\/claude-sonnet-4-6/.test(baseExplorer?.result ?? ""),
  `explorer requests ${base.filter((r) => r.agent === "explorer").length}; result ${JSON.stringify((baseExplorer?.result ?? "").slice(0, 120))}`);
check("B2 without hookwire, oracle (an available model) runs on fake-model",
  JSON.stringify(modelsOf(base, "oracle")) === JSON.stringify(["fake-model"]), JSON.stringify(modelsOf(base, "oracle")));

// --- With hookwire ------------------------------------------------------------------
const hw = readJsonl(join(work, "hw", "requests.jsonl"));
const trace = readJsonl(join(work, "hw", "trace-run.jsonl"));
const events = readJsonl(join(work, "hw", "fakellm-events.jsonl"));
const sidecarLog = readJsonl(join(work, "hw", "sidecar.log"));
const sessionsTxt = readText(join(work, "hw", "sessions.txt"));
const hwTasks = taskResults(hw);

check("H0 the run finished: exit 0 and the orchestrator's final text",
  readText(join(work, "hw", "run.rc")).trim() === "0" && readText(join(work, "hw", "run.jsonl")).includes("MODELS_DONE"),
  `rc ${readText(join(work, "hw", "run.rc")).trim()}`);
const sent = trace.findIndex((r) => r.ev === "notify" && r.method === "providers.update");
const firstChild = trace.findIndex((r) => r.ev === "call" && r.method === "chat.message" && r.params?.input?.agent === "explorer");
check("H1 providers.update went out before the first child's chat.message (fake fake-model-2 among the available models)",
  sent >= 0 && firstChild > sent && trace[sent].params.availableModels.includes("fake/fake-model-2") &&
    !trace[sent].params.connectedProviders.includes("anthropic") && events.some((e) => e.ev === "providers-sent"),
  `providers.update at trace line ${sent}, explorer's chat.message at ${firstChild}; connected ${JSON.stringify(trace[sent]?.params.connectedProviders)}`);
check("H2 every explorer request reached the fake LLM with the fallback model fake-model-2",
  hw.some((r) => r.agent === "explorer") && JSON.stringify(modelsOf(hw, "explorer")) === JSON.stringify(["fake-model-2"]),
  `explorer requests ${hw.filter((r) => r.agent === "explorer").length}, models ${JSON.stringify(modelsOf(hw, "explorer"))}`);
check("H3 the explorer task completed (its result carries the explorer's reply)",
  /EXPLORER_REPLY/.test(hwTasks.find((t) => t.agent === "explorer")?.result ?? ""), JSON.stringify((hwTasks.find((t) => t.agent === "explorer")?.result ?? "").slice(0, 120)));
check("H4 oracle, whose model is available, was left alone: its requests use fake-model",
  JSON.stringify(modelsOf(hw, "oracle")) === JSON.stringify(["fake-model"]), JSON.stringify(modelsOf(hw, "oracle")));
const decisions = sidecarLog.filter((l) => l.message === "model decision");
check("H5 the sidecar logged the decisions at info: explorer fallback-chain (changed), oracle category-default (unchanged)",
  decisions.some((d) => d.agent === "explorer" && d.rung === "fallback-chain" && d.changed === true && d.model === "fake/fake-model-2" && d.from === "anthropic/claude-sonnet-4-6") &&
    decisions.some((d) => d.agent === "oracle" && d.rung === "category-default" && d.changed === false) &&
    !sidecarLog.some((l) => l.message === "model left: no providers.update yet"),
  JSON.stringify(decisions.map((d) => [d.agent, d.rung, d.changed])));
const row = (agent) => sessionsTxt.split("\n").find((l) => new RegExp(`\\s${agent}\\s`).test(l)) ?? "";
check("H6 `hookwire sessions` shows the rung that decided each task session's model",
  row("explorer").includes("fake/fake-model-2 (fallback-chain, changed)") && row("oracle").includes("fake/fake-model (category-default)"),
  `explorer: ${JSON.stringify(row("explorer").trim())}; oracle: ${JSON.stringify(row("oracle").trim())}`);

finish("e2e-models");
