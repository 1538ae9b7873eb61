#!/usr/bin/env bash
# End-to-end test of the shared state database (issue 20): real OpenCode
# (1.18.33, or HOOKWIRE_OPENCODE_VERSION) + the hookwire shim + sidecar,
# against the scripted fake LLM (scripts/fakellm/shared-scenario.mjs).
#
#   1. two `opencode run --agent orchestrator` processes on one project at
#      the same time, each delegating to explorer (each parent's exp-1);
#   2. then two more, again at the same time, each continuing one of those
#      sessions (`--session`) and resuming "exp-1".
#
# Every sidecar uses the shim's default: the project's state database, so
# the resumes run in processes other than those that made the aliases.
# Checked (scripts/e2e-shared-assert.mjs): each resume reached the child its
# parent's first run started, and `hookwire sessions --json` lists both
# parents' children.
#
# Env: as scripts/e2e-opencode.sh (HOOKWIRE_CACHE, HOOKWIRE_BIN,
# HOOKWIRE_E2E_KEEP=1, the shim deadlines).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/opencode.sh
. "$ROOT/scripts/lib/opencode.sh"
RUN_TIMEOUT=${HOOKWIRE_E2E_RUN_TIMEOUT:-180}
oc_scratch e2e-shared HOOKWIRE_E2E_KEEP runs

oc_install
oc_build
oc_env
oc_home "$WORK"
PROJECT=$WORK/project
oc_project "$PROJECT" '# shared-state project'
oc_fakellm_start "$WORK" $((2 * RUN_TIMEOUT + 60)) --scenario "$ROOT/scripts/fakellm/shared-scenario.mjs"
oc_config "$ROOT/scripts/cache-breaks-config.mjs" --mode off

RUNS=()
run() { # NAME PROMPT [opencode run options...]: in the background (RUNS)
  local name=$1 prompt=$2
  shift 2
  (
    set +e
    cd "$PROJECT" && HOOKWIRE_SHIM_TRACE=$WORK/trace-$name.jsonl timeout -k 5 "$RUN_TIMEOUT" "$OPENCODE" run --format json \
      --agent orchestrator --model fake/fake-model "$@" "$prompt" </dev/null >"$WORK/$name.jsonl" 2>"$WORK/$name.err"
    echo $? >"$WORK/$name.rc"
  ) &
  RUNS+=($!)
}
wait_runs() {
  local pid
  for pid in "${RUNS[@]}"; do wait "$pid" || true; done
  RUNS=()
}

START=$(date +%s)
# OpenCode migrates its own database on its first start in a home; two first
# starts at once race on that migration (OpenCode's, not ours), so one
# OpenCode command runs alone first.
(cd "$PROJECT" && timeout -k 5 60 "$OPENCODE" session list </dev/null >"$WORK/warmup.out" 2>"$WORK/warmup.err") || true
log "two opencode runs at once, each delegating"
run a "SHARE_A: Explore the first half."
run b "SHARE_B: Explore the second half."
wait_runs
PARENT_A=$(oc_session_of "$WORK/a.jsonl")
PARENT_B=$(oc_session_of "$WORK/b.jsonl")
log "runs exited $(cat "$WORK/a.rc") and $(cat "$WORK/b.rc"); parents ${PARENT_A:-?} and ${PARENT_B:-?}"
if [ -z "$PARENT_A" ] || [ -z "$PARENT_B" ]; then
  log "FAIL: a run printed no session id"
  tail -n 5 "$WORK/a.err" "$WORK/b.err" >&2 || true
  exit 1
fi

log "two more at once, each resuming one parent's exp-1"
run ra "RESUME_A: Go on." --session "$PARENT_A"
run rb "RESUME_B: Go on." --session "$PARENT_B"
wait_runs
log "resumes exited $(cat "$WORK/ra.rc") and $(cat "$WORK/rb.rc")"
oc_fakellm_stop

"$SIDECAR" sessions --project "$PROJECT" --json >"$WORK/sessions.json"
log "$(($(date +%s) - START)) s"
node "$ROOT/scripts/e2e-shared-assert.mjs" "$WORK" "$PARENT_A" "$PARENT_B"
