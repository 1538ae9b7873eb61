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
#   serve/ the user's own session under `opencode serve`: the orchestrator
#          (with an agentModels entry) is prompted on fake-model-3 over
#          HTTP; hookwire aborts it at the first retry and sends the message
#          again on fake-model-2
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
# serve_run DIR: `opencode serve` with the shim (the orchestrator has a
# fallback too), one session prompted over HTTP on fake-model-3; its
# messages afterwards in DIR/messages.json.
serve_run() {
  local dir=$1 port sid serve_pid
  oc_home "$dir"
  export FAKELLM_EVENTS=$dir/fakellm-events.jsonl HOOKWIRE_SHIM_TRACE=$dir/trace-run.jsonl
  oc_project "$dir/project" '# e2e fallback project'
  oc_fakellm_start "$dir" $((RUN_TIMEOUT + 60)) --scenario "$ROOT/scripts/fakellm/fallback-scenario.mjs"
  oc_config "$ROOT/scripts/e2e-fallback-config.mjs" --user-fallback
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  (cd "$dir/project" && exec timeout -k 5 "$RUN_TIMEOUT" "$OPENCODE" serve --port "$port" --hostname 127.0.0.1 </dev/null >"$dir/serve.out" 2>&1) &
  serve_pid=$!
  for _ in $(seq 150); do grep -q listening "$dir/serve.out" 2>/dev/null && break; sleep 0.2; done
  sid=$(curl -s -m 30 -X POST -H 'content-type: application/json' -d '{}' "http://127.0.0.1:$port/session" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).id)}catch{}})')
  log "serve: session $sid"
  curl -s -m 60 -X POST -H 'content-type: application/json' \
    -d '{"agent":"orchestrator","model":{"providerID":"fake","modelID":"fake-model-3"},"parts":[{"type":"text","text":"Hello. TURN3 AGENT_MARKER:orchestrator"}]}' \
    "http://127.0.0.1:$port/session/$sid/message" >"$dir/first.json" || true
  # The message sent again runs on after the first prompt's answer (the abort): wait for its final text.
  for _ in $(seq 60); do
    curl -s -m 10 "http://127.0.0.1:$port/session/$sid/message" >"$dir/messages.json" || true
    grep -q FALLBACK_TURN3_DONE "$dir/messages.json" && break
    sleep 0.5
  done
  kill "$serve_pid" 2>/dev/null || true
  wait "$serve_pid" 2>/dev/null || true
  oc_fakellm_stop
}
serve_run "$WORK/serve"


node "$ROOT/scripts/e2e-fallback-assert.mjs" "$WORK"
