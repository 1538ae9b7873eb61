#!/usr/bin/env bash
# End-to-end test: real OpenCode (1.18.33, or HOOKWIRE_OPENCODE_VERSION) + the hookwire shim + the hookwire
# sidecar, against a scripted fake LLM (scripts/fakellm/). Asserts on what the
# LLM actually received (scripts/e2e-opencode-assert.mjs), and that the
# session's recording replays (scripts/e2e-record-check.mjs).
#
# Two setups, each with its own OpenCode home:
#   orchestrator  agents orchestrator + explorer + oracle in opencode.json,
#                 the shim with cacheStable false; one run (recorded), then a
#                 second OpenCode process deletes the session
#   stock         no agent definitions (OpenCode's build, plan, explore,
#                 general), the shim with its defaults; two runs of `build`,
#                 the second continuing the first's session
#
# Needs only Go, Node 20 and npm. The only network use is the npm install of
# OpenCode into ${HOOKWIRE_CACHE:-$HOME/.cache/hookwire}/opencode-1.18.33
# (reused when present; npm's own cache lives there too). The install, the
# builds, the isolation and the fake LLM's start are scripts/lib/opencode.sh,
# shared with scripts/cache-breaks.sh.
#
# Env:
#   HOOKWIRE_CACHE      cache root (default $HOME/.cache/hookwire)
#   HOOKWIRE_BIN        use this sidecar binary instead of building one
#   HOOKWIRE_E2E_KEEP=1 keep the scratch directory (it is kept on failure anyway)
#   HOOKWIRE_E2E_TIMEOUT_MS / HOOKWIRE_E2E_TRANSFORM_TIMEOUT_MS  shim deadlines
#                       (default 1000 / 4000: this test is about behaviour, and a
#                       loaded CI machine must not turn a slow reply into a
#                       failed check; the shim's own tests cover the defaults
#                       250 / 2000. Every fail-open call is reported.)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/opencode.sh
. "$ROOT/scripts/lib/opencode.sh"
RUN_TIMEOUT=${HOOKWIRE_E2E_RUN_TIMEOUT:-180}
oc_scratch e2e HOOKWIRE_E2E_KEEP test

# --- 1. OpenCode, installed once into the cache -------------------------------
oc_install

# --- 2. The sidecar and the shim --------------------------------------------------
oc_build

# --- 3. An isolated OpenCode home with the config pre-seeded ----------------------
oc_env
oc_home "$WORK"
export FAKELLM_EVENTS=$WORK/fakellm-events.jsonl
# No state option: the shim's default per-project state file, under
# $XDG_STATE_HOME/hookwire, is what carries the aliases from the run to the
# delete process (check 6).

PROJECT=$WORK/project
oc_project "$PROJECT" '# e2e project'
if command -v git >/dev/null; then
  git -C "$PROJECT" init -q && git -C "$PROJECT" -c user.name=e2e -c user.email=e2e@localhost add -A &&
    git -C "$PROJECT" -c user.name=e2e -c user.email=e2e@localhost commit -qm init || true
fi

# --- 4. The fake LLM ----------------------------------------------------------------
export HOOKWIRE_SHIM_TRACE=$WORK/trace-run.jsonl # the fake LLM reads the sidecar's pid from it
oc_fakellm_start "$WORK" $((RUN_TIMEOUT + 60))
log "fake LLM on 127.0.0.1:$FAKELLM_PORT"

oc_config "$ROOT/scripts/e2e-opencode-config.mjs"

START=$(date +%s)
# --- 5. The run ------------------------------------------------------------------------
log "opencode run (at most ${RUN_TIMEOUT}s)"
set +e
# The run records itself through the shim's record option (checked in 8).
(cd "$PROJECT" && HOOKWIRE_RECORD=$WORK/recording.json timeout -k 5 "$RUN_TIMEOUT" "$OPENCODE" run --format json --agent orchestrator \
  --model fake/fake-model "Please explore the repo" </dev/null >"$WORK/run.jsonl" 2>"$WORK/run.err")
RUN_RC=$?
set -e
echo "$RUN_RC" >"$WORK/run.rc"
log "opencode run exited $RUN_RC"

# --- 6. Delete the parent session in a second OpenCode process ------------------------
PARENT=$(oc_session_of "$WORK/run.jsonl")
echo "$PARENT" >"$WORK/parent"
if [ -n "$PARENT" ]; then
  set +e
  if oc_version_below 1.14; then
    # OpenCode 1.3 and older: `opencode session delete` exits before its
    # plugins hear session.deleted (they have no dispose hook to finish
    # on), so the session is deleted through a running server, as the TUI
    # does (docs/OPENCODE.md).
    log "opencode serve + DELETE /session/$PARENT"
    (cd "$PROJECT" && HOOKWIRE_SHIM_TRACE=$WORK/trace-delete.jsonl oc_serve_delete "$PARENT" >"$WORK/delete.out" 2>"$WORK/delete.err")
  else
    log "opencode session delete $PARENT"
    (cd "$PROJECT" && HOOKWIRE_SHIM_TRACE=$WORK/trace-delete.jsonl timeout -k 5 60 "$OPENCODE" session delete "$PARENT" \
      </dev/null >"$WORK/delete.out" 2>"$WORK/delete.err")
  fi
  echo $? >"$WORK/delete.rc"
  set -e
else
  log "no parent session id in the run's output"
fi

oc_fakellm_stop
log "orchestrator setup: $(($(date +%s) - START)) s"

# --- 7. Stock OpenCode: no agents of ours, two runs of build in one session -----------
START=$(date +%s)
STOCK=$WORK/stock
oc_home "$STOCK"
export FAKELLM_EVENTS=$STOCK/fakellm-events.jsonl
STOCK_PROJECT=$STOCK/project
oc_project "$STOCK_PROJECT" '# e2e stock project'
oc_fakellm_start "$STOCK" $((2 * RUN_TIMEOUT + 60))
oc_config "$ROOT/scripts/e2e-opencode-config.mjs" --stock

stock_run() { # N PROMPT [opencode run options...]
  local n=$1 prompt=$2
  shift 2
  log "stock: opencode run $n (at most ${RUN_TIMEOUT}s)"
  set +e
  (cd "$STOCK_PROJECT" && HOOKWIRE_SHIM_TRACE=$STOCK/trace-run$n.jsonl timeout -k 5 "$RUN_TIMEOUT" "$OPENCODE" run --format json \
    --agent build --model fake/fake-model "$@" "$prompt" </dev/null >"$STOCK/run$n.jsonl" 2>"$STOCK/run$n.err")
  echo $? >"$STOCK/run$n.rc"
  set -e
  log "stock: opencode run $n exited $(cat "$STOCK/run$n.rc")"
}
stock_run 1 "STOCK_RUN1: Look around the repo. AGENT_MARKER:build"
STOCK_PARENT=$(oc_session_of "$STOCK/run1.jsonl")
echo "$STOCK_PARENT" >"$STOCK/parent"
if [ -n "$STOCK_PARENT" ]; then
  stock_run 2 "STOCK_RUN2: Pick up where you left off." --session "$STOCK_PARENT"
else
  log "stock: no session id in run 1's output"
fi
oc_fakellm_stop
log "stock setup: $(($(date +%s) - START)) s"

# --- 8. Assertions ------------------------------------------------------------------------
RC=0
node "$ROOT/scripts/e2e-opencode-assert.mjs" "$WORK" || RC=$?

# --- 9. The run's recording replays (issue 13) -----------------------------------------
node "$ROOT/scripts/e2e-record-check.mjs" "$WORK" "$SIDECAR" || RC=$?
exit "$RC"
