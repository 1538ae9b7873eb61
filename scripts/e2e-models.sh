#!/usr/bin/env bash
# End-to-end test of model fallback for subagents (PROTOCOL.md 4.7, issue
# 11): real OpenCode 1.18.33 against the scripted fake LLM, with two
# providers: `fake` (connected) and `anthropic` (in OpenCode's catalogue,
# not connected: no key). explorer is configured on
# anthropic/claude-sonnet-4-6 with a fallback chain (agentModels) to
# fake/fake-model-2; oracle on fake/fake-model, which is available.
#
#   base/  OpenCode alone: what it does with explorer's model (the check
#          prints it: the task fails, "Model not found")
#   hw/    with the hookwire shim and sidecar: explorer's requests reach the
#          fake LLM as fake-model-2, oracle's stay on fake-model, and
#          `hookwire sessions` shows the rung that decided
#
# The fake LLM holds the orchestrator's first reply until the shim's trace
# shows providers.update sent (scripts/fakellm/models-scenario.mjs), so the
# first child's chat.message cannot race the provider list.
#
# Env: HOOKWIRE_CACHE, HOOKWIRE_BIN, HOOKWIRE_E2E_KEEP=1, and the shim
# deadlines HOOKWIRE_E2E_TIMEOUT_MS / HOOKWIRE_E2E_TRANSFORM_TIMEOUT_MS, as
# for scripts/e2e-opencode.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/opencode.sh
. "$ROOT/scripts/lib/opencode.sh"
RUN_TIMEOUT=${HOOKWIRE_E2E_RUN_TIMEOUT:-180}
oc_scratch e2e-models HOOKWIRE_E2E_KEEP test

oc_install
oc_build
oc_env
# anthropic must stay unconnected whatever the caller's environment holds.
unset ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN

# models_run DIR [generator options...]: one isolated OpenCode home in DIR,
# the fake LLM, and one `opencode run` of the orchestrator.
models_run() {
  local dir=$1
  shift
  local start
  start=$(date +%s)
  oc_home "$dir"
  export FAKELLM_EVENTS=$dir/fakellm-events.jsonl HOOKWIRE_SHIM_TRACE=$dir/trace-run.jsonl
  oc_project "$dir/project" '# e2e models project'
  oc_fakellm_start "$dir" $((RUN_TIMEOUT + 60)) --scenario "$ROOT/scripts/fakellm/models-scenario.mjs"
  oc_config "$ROOT/scripts/e2e-models-config.mjs" "$@"
  log "$(basename "$dir"): opencode run (at most ${RUN_TIMEOUT}s)"
  set +e
  (cd "$dir/project" && timeout -k 5 "$RUN_TIMEOUT" "$OPENCODE" run --format json --agent orchestrator \
    --model fake/fake-model "Ask explorer and oracle. AGENT_MARKER:orchestrator" </dev/null >"$dir/run.jsonl" 2>"$dir/run.err")
  echo $? >"$dir/run.rc"
  set -e
  oc_fakellm_stop
  log "$(basename "$dir"): opencode run exited $(cat "$dir/run.rc") after $(($(date +%s) - start)) s"
}

export MODELS_SCENARIO_WAIT_FOR_PROVIDERS=0
models_run "$WORK/base" --no-plugin
export MODELS_SCENARIO_WAIT_FOR_PROVIDERS=1
models_run "$WORK/hw"
# What the shim's default per-project state file remembers (XDG_STATE_HOME is hw's).
"$SIDECAR" sessions --project "$WORK/hw/project" >"$WORK/hw/sessions.txt" 2>&1 || true
sed 's/^/[e2e-models] sessions: /' "$WORK/hw/sessions.txt" >&2

node "$ROOT/scripts/e2e-models-assert.mjs" "$WORK"
