#!/usr/bin/env bash
# Prompt-cache breaks, measured through real OpenCode 1.18.33 (PROTOCOL.md 4.4).
#
# Runs one scripted orchestrator session (scripts/fakellm/cache-scenario.mjs:
# 4 user turns, each its own `opencode run --session`, delegations to explorer
# and oracle, resumes of exp-1 / ora-1; about 24 LLM requests) three times
# against the fake LLM:
#   baseline  OpenCode alone, no plugin (resumes pass the child's real id)
#   off       the hookwire shim, cacheStable false (stated: true is the default)
#   stable    the hookwire shim, cacheStable true (stated, like off)
# then counts cache breaks in what the LLM received and checks that cacheStable
# breaks the cache no more often than OpenCode itself. The fake LLM reports
# cached tokens as a prefix cache does (server.mjs --prefix-cache), and after
# the last turn of each hookwire run the script keeps `hookwire sessions
# --json` (what hookwire counted, PROTOCOL.md 4.9) beside `opencode export` of
# the orchestrator session (what OpenCode recorded): the report checks one
# against the other
# (scripts/cache-breaks-report.mjs; the definitions are there and in
# scripts/CACHE_RESULTS.md). Prints a table, writes it as JSON, exits non-zero
# when a check fails.
#
# Same install cache, isolation and fake LLM as scripts/e2e-opencode.sh: all
# of it is scripts/lib/opencode.sh.
#
# Env:
#   HOOKWIRE_CACHE              cache root (default $HOME/.cache/hookwire)
#   HOOKWIRE_BIN                use this sidecar binary instead of building one
#   HOOKWIRE_CACHE_BREAKS_JSON  where the JSON goes (default bin/cache-breaks.json)
#   HOOKWIRE_CACHE_BREAKS_KEEP=1  keep the scratch directory (kept on failure anyway)
#   HOOKWIRE_E2E_TIMEOUT_MS / HOOKWIRE_E2E_TRANSFORM_TIMEOUT_MS  shim deadlines
#                               (default 1000 / 4000, as the e2e test: a hook that
#                               passed through would spoil the measurement, and
#                               the report fails when one did)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/opencode.sh
. "$ROOT/scripts/lib/opencode.sh"
JSON_OUT=${HOOKWIRE_CACHE_BREAKS_JSON:-$ROOT/bin/cache-breaks.json}
TURN_TIMEOUT=${HOOKWIRE_CACHE_BREAKS_TURN_TIMEOUT:-120}
MODES=(baseline off stable)
TURNS=(
  "TURN1: Map the repository and review its design."
  "TURN2: Look again and find the tests."
  "TURN3: Reconsider the design with what you found."
  "TURN4: Finally check the docs."
)
oc_scratch cache-breaks HOOKWIRE_CACHE_BREAKS_KEEP run

# --- 1. OpenCode, installed once into the cache --------------------------------
oc_install

# --- 2. The sidecar and the shim ---------------------------------------------------
oc_build
oc_env

# OpenCode puts today's date in the system prompt, so a run that crosses
# local midnight breaks its own cache. Run OpenCode in the fixed-offset zone
# where it is now about noon: the three runs take minutes, not twelve hours.
utc_hour=$((10#$(date -u +%H)))
offset=$((utc_hour - 12)) # Etc/GMT+N is N hours behind UTC
if [ "$offset" -ge 0 ]; then export TZ="Etc/GMT+$offset"; else export TZ="Etc/GMT$offset"; fi
log "OpenCode runs with TZ=$TZ (local time $(date +%H:%M)), far from midnight"

# --- 3. One run: an isolated OpenCode home, a fresh fake LLM, four turns -----------
run_mode() {
  local mode=$1 run=$WORK/$1
  mkdir -p "$run"
  oc_home "$run"
  local project=$run/project
  oc_project "$project" '# cache-break measurement project'

  local resume=alias
  [ "$mode" = baseline ] && resume=id
  CACHE_SCENARIO_RESUME=$resume oc_fakellm_start "$run" $((TURN_TIMEOUT * ${#TURNS[@]} + 60)) \
    --scenario "$ROOT/scripts/fakellm/cache-scenario.mjs" --prefix-cache 1

  oc_config "$ROOT/scripts/cache-breaks-config.mjs" --mode "$mode"

  local session="" turn=0 prompt rc
  for prompt in "${TURNS[@]}"; do
    turn=$((turn + 1))
    local -a cont=()
    [ -n "$session" ] && cont=(--session "$session")
    set +e
    (cd "$project" && HOOKWIRE_SHIM_TRACE=$run/trace-turn$turn.jsonl timeout -k 5 "$TURN_TIMEOUT" \
      "$OPENCODE" run --format json --agent orchestrator --model fake/fake-model "${cont[@]}" "$prompt" \
      </dev/null >"$run/turn$turn.jsonl" 2>"$run/turn$turn.err")
    rc=$?
    set -e
    echo "$rc" >"$run/turn$turn.rc"
    if [ -z "$session" ]; then
      session=$(oc_session_of "$run/turn$turn.jsonl")
      echo "$session" >"$run/session"
    fi
    log "$mode: turn $turn exited $rc (session ${session:-?}, $(wc -l <"$run/requests.jsonl" 2>/dev/null || echo 0) requests so far)"
    if [ "$rc" -ne 0 ] || [ -z "$session" ]; then
      log "FAIL: $mode turn $turn: opencode run exited $rc; see $run/turn$turn.err"
      tail -5 "$run/turn$turn.err" >&2 || true
      return 1
    fi
  done

  # What hookwire counted, read while the parent session still exists, and
  # what OpenCode itself recorded of the same session (its assistant
  # messages' tokens), without plugins.
  if [ "$mode" != baseline ]; then
    "$SIDECAR" sessions --project "$project" --json >"$run/sessions.json"
  fi
  (cd "$project" && timeout -k 5 60 "$OPENCODE" --pure export "$session" </dev/null >"$run/export.json" 2>"$run/export.err") ||
    { log "FAIL: $mode: opencode export exited $?; see $run/export.err"; return 1; }

  oc_fakellm_stop
}

START=$(date +%s)
for mode in "${MODES[@]}"; do
  t0=$(date +%s)
  run_mode "$mode"
  log "$mode: $(($(date +%s) - t0)) s"
done
log "three runs: $(($(date +%s) - START)) s"

# --- 4. Count, report, check ----------------------------------------------------------
mkdir -p "$(dirname "$JSON_OUT")"
node "$ROOT/scripts/cache-breaks-report.mjs" --json "$JSON_OUT" "$WORK"
