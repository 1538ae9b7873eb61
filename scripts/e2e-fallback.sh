#!/usr/bin/env bash
# End-to-end test of runtime model fallback (PROTOCOL.md 4.8, issue 21):
# real OpenCode 1.18.33 against the scripted fake LLM
# (scripts/fakellm/fallback-scenario.mjs), whose fake-model-3 always answers
# HTTP 429. explorer and oracle are configured on it; explorer has an
# agentModels fallback (fake-model-2), oracle none (its parent's model,
# fake-model, is its fallback). A 3-turn session, one `opencode run`
# process per turn, each continuing the session of the first:
#
#   base/  OpenCode alone: what it does (the check prints it: every task
#          fails after OpenCode's own retries)
#   hw/    with the hookwire shim and sidecar: the first failure cools
#          fake-model-3 down, explorer's task call returns explorer's own
#          answer from fake-model-2, every later request avoids fake-model-3,
#          the resume of exp-1 in turn 2 runs the same child, and
#          `hookwire sessions --json` shows the switches
#
# Env: HOOKWIRE_CACHE, HOOKWIRE_BIN, HOOKWIRE_E2E_KEEP=1, the shim deadlines
# HOOKWIRE_E2E_TIMEOUT_MS / HOOKWIRE_E2E_TRANSFORM_TIMEOUT_MS as for
# scripts/e2e-opencode.sh, and HOOKWIRE_E2E_FALLBACK_BASE=0 to skip base/.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/opencode.sh
. "$ROOT/scripts/lib/opencode.sh"
RUN_TIMEOUT=${HOOKWIRE_E2E_RUN_TIMEOUT:-180}
oc_scratch e2e-fallback HOOKWIRE_E2E_KEEP test

oc_install
oc_build
oc_env

# fallback_runs DIR [generator options...]: one isolated OpenCode home in
# DIR, the fake LLM, and three `opencode run`s of the orchestrator, the
# second and third continuing the first one's session.
fallback_runs() {
  local dir=$1
  shift
  local start session=
  oc_home "$dir"
  export FAKELLM_EVENTS=$dir/fakellm-events.jsonl HOOKWIRE_SHIM_TRACE=$dir/trace-run.jsonl
  oc_project "$dir/project" '# e2e fallback project'
  oc_fakellm_start "$dir" $((3 * RUN_TIMEOUT + 60)) --scenario "$ROOT/scripts/fakellm/fallback-scenario.mjs"
  oc_config "$ROOT/scripts/e2e-fallback-config.mjs" "$@"
  for turn in TURN1 TURN2 TURN3; do
    start=$(date +%s)
    # The fake LLM's request log is cut per turn: requests before this mark are earlier turns'.
    wc -l <"$dir/requests.jsonl" 2>/dev/null >"$dir/mark-$turn" || echo 0 >"$dir/mark-$turn"
    set +e
    (cd "$dir/project" && timeout -k 5 "$RUN_TIMEOUT" "$OPENCODE" run --format json --agent orchestrator \
      --model fake/fake-model ${session:+--session "$session"} "Go on. $turn AGENT_MARKER:orchestrator" \
      </dev/null >"$dir/run-$turn.jsonl" 2>"$dir/run-$turn.err")
    echo $? >"$dir/run-$turn.rc"
    set -e
    [ -n "$session" ] || session=$(oc_session_of "$dir/run-$turn.jsonl")
    log "$(basename "$dir") $turn: opencode run exited $(cat "$dir/run-$turn.rc") after $(($(date +%s) - start)) s (session $session)"
  done
  echo "$session" >"$dir/session"
  oc_fakellm_stop
}

if [ "${HOOKWIRE_E2E_FALLBACK_BASE:-1}" != 0 ]; then
  fallback_runs "$WORK/base" --no-plugin
fi
fallback_runs "$WORK/hw"
# What the shim's default per-project state file remembers (XDG_STATE_HOME is hw's).
"$SIDECAR" sessions --json --project "$WORK/hw/project" >"$WORK/hw/sessions.json" 2>"$WORK/hw/sessions.err" || true
"$SIDECAR" sessions --project "$WORK/hw/project" >"$WORK/hw/sessions.txt" 2>&1 || true
sed 's/^/[e2e-fallback] sessions: /' "$WORK/hw/sessions.txt" >&2

node "$ROOT/scripts/e2e-fallback-assert.mjs" "$WORK"
