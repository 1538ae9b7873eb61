#!/usr/bin/env bash
# Prompt-cache breaks, measured through real OpenCode 1.18.33 (PROTOCOL.md 4.4).
#
# Runs one scripted orchestrator session (scripts/fakellm/cache-scenario.mjs:
# 4 user turns, each its own `opencode run --session`, delegations to explorer
# and oracle, resumes of exp-1 / ora-1; about 24 LLM requests) three times
# against the fake LLM:
#   baseline  OpenCode alone, no plugin (resumes pass the child's real id)
#   default   the hookwire shim, cacheStable off
#   stable    the hookwire shim, cacheStable on
# then counts cache breaks in what the LLM received and checks that cacheStable
# breaks the cache no more often than OpenCode itself
# (scripts/cache-breaks-report.mjs; the definitions are there and in
# scripts/CACHE_RESULTS.md). Prints a table, writes it as JSON, exits non-zero
# when a check fails.
#
# Same install cache, isolation and fake LLM as scripts/e2e-opencode.sh.
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

OPENCODE_VERSION=1.18.33
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE_ROOT=${HOOKWIRE_CACHE:-$HOME/.cache/hookwire}
CACHE=$CACHE_ROOT/opencode-$OPENCODE_VERSION
NPM_CACHE=$CACHE/.npm
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hookwire-cache-breaks.XXXXXX")
JSON_OUT=${HOOKWIRE_CACHE_BREAKS_JSON:-$ROOT/bin/cache-breaks.json}
TURN_TIMEOUT=${HOOKWIRE_CACHE_BREAKS_TURN_TIMEOUT:-120}
MODES=(baseline default stable)
TURNS=(
  "TURN1: Map the repository and review its design."
  "TURN2: Look again and find the tests."
  "TURN3: Reconsider the design with what you found."
  "TURN4: Finally check the docs."
)

log() { printf '[cache-breaks] %s\n' "$*" >&2; }

FAKELLM_PID=
cleanup() {
  local rc=$?
  set +e
  [ -n "$FAKELLM_PID" ] && kill "$FAKELLM_PID" 2>/dev/null && wait "$FAKELLM_PID" 2>/dev/null
  # Any sidecar a shim started and that is somehow still running.
  for trace in "$WORK"/*/trace-*.jsonl; do
    [ -f "$trace" ] || continue
    for pid in $(node -e '
      const fs = require("fs");
      for (const l of fs.readFileSync(process.argv[1], "utf8").split("\n"))
        if (l) { try { const r = JSON.parse(l); if (r.ev === "spawn") console.log(r.pid); } catch {} }' "$trace"); do
      if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q hookwire; then
        log "sidecar $pid still running after the run; killing it"
        kill -9 "$pid" 2>/dev/null
      fi
    done
  done
  if [ "$rc" -eq 0 ] && [ "${HOOKWIRE_CACHE_BREAKS_KEEP:-0}" != 1 ]; then
    rm -rf "$WORK"
  else
    log "scratch directory kept: $WORK"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 1. OpenCode, installed once into the cache (as scripts/e2e-opencode.sh) ---
find_opencode() {
  local arch candidate
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) arch=$(uname -m) ;;
  esac
  local os
  os=$(uname -s | tr '[:upper:]' '[:lower:]')
  for candidate in "$CACHE"/node_modules/opencode-"$os"-"$arch"/bin/opencode \
    "$CACHE"/node_modules/opencode-"$os"-"$arch"-baseline/bin/opencode \
    "$CACHE"/node_modules/opencode-"$os"-"$arch"-musl/bin/opencode \
    "$CACHE"/node_modules/opencode-"$os"-"$arch"-baseline-musl/bin/opencode; do
    if [ -x "$candidate" ] && [ "$("$candidate" --version 2>/dev/null)" = "$OPENCODE_VERSION" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if ! OPENCODE=$(find_opencode); then
  log "installing opencode-ai@$OPENCODE_VERSION into $CACHE"
  mkdir -p "$CACHE"
  [ -f "$CACHE/package.json" ] || echo '{"name":"hookwire-opencode-cache","private":true}' >"$CACHE/package.json"
  npm install --prefix "$CACHE" --cache "$NPM_CACHE" --ignore-scripts --no-audit --no-fund --loglevel=error \
    "opencode-ai@$OPENCODE_VERSION" "@opencode-ai/plugin@$OPENCODE_VERSION" >&2
  OPENCODE=$(find_opencode) || { log "FAIL: no runnable opencode $OPENCODE_VERSION binary under $CACHE/node_modules"; exit 1; }
fi
log "opencode: $OPENCODE"

# --- 2. The sidecar and the shim ---------------------------------------------------
if [ -n "${HOOKWIRE_BIN:-}" ]; then
  SIDECAR=$HOOKWIRE_BIN
else
  SIDECAR=$WORK/bin/hookwire
  log "building the sidecar"
  (cd "$ROOT" && go build -o "$SIDECAR" ./cmd/hookwire)
fi
log "building the shim"
(
  cd "$ROOT/shim"
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --cache "$NPM_CACHE" --no-audit --no-fund --loglevel=error >&2
  fi
  npm run --silent build >&2
)

export OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1
export OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_CLAUDE_CODE=1
export OPENCODE_DISABLE_EXTERNAL_SKILLS=1 OPENCODE_DISABLE_EMBEDDED_WEB_UI=1 OPENCODE_DISABLE_PRUNE=1
export HOOKWIRE_BIN=$SIDECAR

# --- 3. One run: an isolated OpenCode home, a fresh fake LLM, four turns -----------
run_mode() {
  local mode=$1 run=$WORK/$1
  mkdir -p "$run"
  export HOME=$run/home
  export XDG_CONFIG_HOME=$run/xdg/config XDG_DATA_HOME=$run/xdg/data
  export XDG_CACHE_HOME=$run/xdg/cache XDG_STATE_HOME=$run/xdg/state
  export HOOKWIRE_LOG_FILE=$run/sidecar.log
  mkdir -p "$HOME" "$XDG_CONFIG_HOME/opencode/node_modules" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_STATE_HOME"
  local project=$run/project
  mkdir -p "$project"
  printf '# cache-break measurement project\n' >"$project/README.md"

  local resume=alias
  [ "$mode" = baseline ] && resume=id
  CACHE_SCENARIO_RESUME=$resume node "$ROOT/scripts/fakellm/server.mjs" --scenario "$ROOT/scripts/fakellm/cache-scenario.mjs" \
    --log "$run/requests.jsonl" --port-file "$run/port" \
    --max-seconds $((TURN_TIMEOUT * ${#TURNS[@]} + 60)) 2>"$run/fakellm.err" &
  FAKELLM_PID=$!
  for _ in $(seq 100); do [ -s "$run/port" ] && break; sleep 0.1; done
  [ -s "$run/port" ] || { log "FAIL: the fake LLM did not start"; cat "$run/fakellm.err" >&2; exit 1; }

  node "$ROOT/scripts/cache-breaks-config.mjs" \
    --dir "$XDG_CONFIG_HOME/opencode" --port "$(cat "$run/port")" --version "$OPENCODE_VERSION" --mode "$mode" \
    --shim "$ROOT/shim/dist/index.js" \
    --timeout-ms "${HOOKWIRE_E2E_TIMEOUT_MS:-1000}" --transform-timeout-ms "${HOOKWIRE_E2E_TRANSFORM_TIMEOUT_MS:-4000}"

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
      session=$(node -e '
        const fs = require("fs");
        for (const l of fs.readFileSync(process.argv[1], "utf8").split("\n")) {
          if (!l.trim()) continue;
          try { const e = JSON.parse(l); const id = e.sessionID ?? e.part?.sessionID; if (id) { console.log(id); break; } } catch {}
        }' "$run/turn$turn.jsonl")
      echo "$session" >"$run/session"
    fi
    log "$mode: turn $turn exited $rc (session ${session:-?}, $(wc -l <"$run/requests.jsonl" 2>/dev/null || echo 0) requests so far)"
    if [ "$rc" -ne 0 ] || [ -z "$session" ]; then
      log "FAIL: $mode turn $turn: opencode run exited $rc; see $run/turn$turn.err"
      tail -5 "$run/turn$turn.err" >&2 || true
      return 1
    fi
  done

  kill "$FAKELLM_PID" 2>/dev/null || true
  wait "$FAKELLM_PID" 2>/dev/null || true
  FAKELLM_PID=
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
