#!/usr/bin/env bash
# End-to-end test: real OpenCode 1.18.33 + the hookwire shim + the hookwire
# sidecar, against a scripted fake LLM (scripts/fakellm/). Asserts on what the
# LLM actually received (scripts/e2e-opencode-assert.mjs).
#
# Needs only Go, Node 20 and npm. The only network use is the npm install of
# OpenCode into ${HOOKWIRE_CACHE:-$HOME/.cache/hookwire}/opencode-1.18.33
# (reused when present; npm's own cache lives there too).
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

OPENCODE_VERSION=1.18.33
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE_ROOT=${HOOKWIRE_CACHE:-$HOME/.cache/hookwire}
CACHE=$CACHE_ROOT/opencode-$OPENCODE_VERSION
NPM_CACHE=$CACHE/.npm
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hookwire-e2e.XXXXXX")
RUN_TIMEOUT=${HOOKWIRE_E2E_RUN_TIMEOUT:-180}

log() { printf '[e2e] %s\n' "$*" >&2; }

FAKELLM_PID=
cleanup() {
  local rc=$?
  set +e
  [ -n "$FAKELLM_PID" ] && kill "$FAKELLM_PID" 2>/dev/null && wait "$FAKELLM_PID" 2>/dev/null
  # Any sidecar the shim started and that is somehow still running.
  for trace in "$WORK"/trace*.jsonl; do
    [ -f "$trace" ] || continue
    for pid in $(node -e '
      const fs = require("fs");
      for (const l of fs.readFileSync(process.argv[1], "utf8").split("\n"))
        if (l) { const r = JSON.parse(l); if (r.ev === "spawn") console.log(r.pid); }' "$trace"); do
      if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q hookwire; then
        log "sidecar $pid still running after the test; killing it"
        kill -9 "$pid" 2>/dev/null
      fi
    done
  done
  if [ "$rc" -eq 0 ] && [ "${HOOKWIRE_E2E_KEEP:-0}" != 1 ]; then
    rm -rf "$WORK"
  else
    log "scratch directory kept: $WORK"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 1. OpenCode, installed once into the cache -------------------------------
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

# --- 2. The sidecar and the shim --------------------------------------------------
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

# --- 3. An isolated OpenCode home with the config pre-seeded ----------------------
export HOME=$WORK/home
export XDG_CONFIG_HOME=$WORK/xdg/config XDG_DATA_HOME=$WORK/xdg/data
export XDG_CACHE_HOME=$WORK/xdg/cache XDG_STATE_HOME=$WORK/xdg/state
export OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1
export OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_CLAUDE_CODE=1
export OPENCODE_DISABLE_EXTERNAL_SKILLS=1 OPENCODE_DISABLE_EMBEDDED_WEB_UI=1 OPENCODE_DISABLE_PRUNE=1
export HOOKWIRE_BIN=$SIDECAR
export HOOKWIRE_LOG_FILE=$WORK/sidecar.log
export FAKELLM_EVENTS=$WORK/fakellm-events.jsonl
# No state option: the shim's default per-project state file, under
# $XDG_STATE_HOME/hookwire, is what carries the aliases from the run to the
# delete process (check 6).
mkdir -p "$HOME" "$XDG_CONFIG_HOME/opencode/node_modules" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_STATE_HOME"

PROJECT=$WORK/project
mkdir -p "$PROJECT"
printf '# e2e project\n' >"$PROJECT/README.md"
if command -v git >/dev/null; then
  git -C "$PROJECT" init -q && git -C "$PROJECT" -c user.name=e2e -c user.email=e2e@localhost add -A &&
    git -C "$PROJECT" -c user.name=e2e -c user.email=e2e@localhost commit -qm init || true
fi

# --- 4. The fake LLM ----------------------------------------------------------------
export HOOKWIRE_SHIM_TRACE=$WORK/trace-run.jsonl # the fake LLM reads the sidecar's pid from it
node "$ROOT/scripts/fakellm/server.mjs" --log "$WORK/requests.jsonl" --port-file "$WORK/port" \
  --max-seconds $((RUN_TIMEOUT + 60)) 2>"$WORK/fakellm.err" &
FAKELLM_PID=$!
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
[ -s "$WORK/port" ] || { log "FAIL: the fake LLM did not start"; cat "$WORK/fakellm.err" >&2; exit 1; }
PORT=$(cat "$WORK/port")
log "fake LLM on 127.0.0.1:$PORT"

node "$ROOT/scripts/e2e-opencode-config.mjs" \
  --dir "$XDG_CONFIG_HOME/opencode" --port "$PORT" --version "$OPENCODE_VERSION" \
  --shim "$ROOT/shim/dist/index.js" \
  --timeout-ms "${HOOKWIRE_E2E_TIMEOUT_MS:-1000}" --transform-timeout-ms "${HOOKWIRE_E2E_TRANSFORM_TIMEOUT_MS:-4000}"

# --- 5. The run ------------------------------------------------------------------------
log "opencode run (at most ${RUN_TIMEOUT}s)"
set +e
(cd "$PROJECT" && timeout -k 5 "$RUN_TIMEOUT" "$OPENCODE" run --format json --agent orchestrator \
  --model fake/fake-model "Please explore the repo" </dev/null >"$WORK/run.jsonl" 2>"$WORK/run.err")
RUN_RC=$?
set -e
echo "$RUN_RC" >"$WORK/run.rc"
log "opencode run exited $RUN_RC"

# --- 6. Delete the parent session in a second OpenCode process ------------------------
PARENT=$(node -e '
  const fs = require("fs");
  for (const l of fs.readFileSync(process.argv[1], "utf8").split("\n")) {
    if (!l.trim()) continue;
    try { const e = JSON.parse(l); const id = e.sessionID ?? e.part?.sessionID; if (id) { console.log(id); break; } } catch {}
  }' "$WORK/run.jsonl")
echo "$PARENT" >"$WORK/parent"
if [ -n "$PARENT" ]; then
  log "opencode session delete $PARENT"
  set +e
  (cd "$PROJECT" && HOOKWIRE_SHIM_TRACE=$WORK/trace-delete.jsonl timeout -k 5 60 "$OPENCODE" session delete "$PARENT" \
    </dev/null >"$WORK/delete.out" 2>"$WORK/delete.err")
  echo $? >"$WORK/delete.rc"
  set -e
else
  log "no parent session id in the run's output"
fi

kill "$FAKELLM_PID" 2>/dev/null || true
wait "$FAKELLM_PID" 2>/dev/null || true
FAKELLM_PID=

# --- 7. Assertions ------------------------------------------------------------------------
node "$ROOT/scripts/e2e-opencode-assert.mjs" "$WORK"
