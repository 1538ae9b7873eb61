# Shared by the scripts that drive real OpenCode against the fake LLM
# (scripts/e2e-opencode.sh, scripts/cache-breaks.sh). Source it after
# `set -euo pipefail`; it defines variables and functions and runs nothing.
#
# The only network use is the npm install of OpenCode into
# ${HOOKWIRE_CACHE:-$HOME/.cache/hookwire}/opencode-$OPENCODE_VERSION
# (reused when present; npm's own cache lives there too).

# The OpenCode under test: HOOKWIRE_OPENCODE_VERSION, default the latest
# verified (README's compatibility table; `make test` also runs the oldest).
OPENCODE_VERSION=${HOOKWIRE_OPENCODE_VERSION:-1.18.33}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE_ROOT=${HOOKWIRE_CACHE:-$HOME/.cache/hookwire}
CACHE=$CACHE_ROOT/opencode-$OPENCODE_VERSION
NPM_CACHE=$CACHE/.npm
FAKELLM_PID=

# oc_scratch TAG KEEP_VAR WHAT: makes the scratch directory $WORK
# (hookwire-TAG.XXXXXX), defines log() with the prefix [TAG], and installs an
# exit trap that stops the fake LLM, kills any sidecar a shim started that is
# still running after WHAT, and removes $WORK unless the script failed or the
# env knob named KEEP_VAR is 1.
oc_scratch() {
  OC_TAG=$1 OC_KEEP_VAR=$2 OC_WHAT=$3
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/hookwire-$OC_TAG.XXXXXX")
  echo "$OPENCODE_VERSION" >"$WORK/opencode-version" # for the checks
  trap oc_cleanup EXIT
  trap 'exit 130' INT TERM
}

log() { printf '[%s] %s\n' "$OC_TAG" "$*" >&2; }

oc_cleanup() {
  local rc=$?
  set +e
  [ -n "$FAKELLM_PID" ] && kill "$FAKELLM_PID" 2>/dev/null && wait "$FAKELLM_PID" 2>/dev/null
  # Any sidecar a shim started and that is somehow still running.
  for trace in "$WORK"/trace*.jsonl "$WORK"/*/trace*.jsonl; do
    [ -f "$trace" ] || continue
    for pid in $(node -e '
      const fs = require("fs");
      for (const l of fs.readFileSync(process.argv[1], "utf8").split("\n"))
        if (l) { try { const r = JSON.parse(l); if (r.ev === "spawn") console.log(r.pid); } catch {} }' "$trace"); do
      if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q hookwire; then
        log "sidecar $pid still running after the $OC_WHAT; killing it"
        kill -9 "$pid" 2>/dev/null
      fi
    done
  done
  if [ "$rc" -eq 0 ] && [ "${!OC_KEEP_VAR:-0}" != 1 ]; then
    rm -rf "$WORK"
  else
    log "scratch directory kept: $WORK"
  fi
  exit "$rc"
}

# --- OpenCode, installed once into the cache ------------------------------------
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

# oc_install: sets OPENCODE, installing it into $CACHE first if needed.
oc_install() {
  if ! OPENCODE=$(find_opencode); then
    log "installing opencode-ai@$OPENCODE_VERSION into $CACHE"
    mkdir -p "$CACHE"
    [ -f "$CACHE/package.json" ] || echo '{"name":"hookwire-opencode-cache","private":true}' >"$CACHE/package.json"
    npm install --prefix "$CACHE" --cache "$NPM_CACHE" --ignore-scripts --no-audit --no-fund --loglevel=error \
      "opencode-ai@$OPENCODE_VERSION" "@opencode-ai/plugin@$OPENCODE_VERSION" >&2
    OPENCODE=$(find_opencode) || { log "FAIL: no runnable opencode $OPENCODE_VERSION binary under $CACHE/node_modules"; exit 1; }
  fi
  log "opencode: $OPENCODE"
}

# oc_build: sets SIDECAR ($HOOKWIRE_BIN, or one built into $WORK/bin) and
# builds the shim into $ROOT/shim/dist.
oc_build() {
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
    # Each e2e script calls this, several per `make test`: tsc and esbuild
    # again only when an input is newer than an output.
    local out
    for out in dist/index.js dist/server.js dist/bin.js; do
      if [ ! -f "$out" ] || [ -n "$(find src package.json package-lock.json tsconfig.json -newer "$out" -print -quit)" ]; then
        npm run --silent build >&2
        return
      fi
    done
    echo "[e2e] the shim's build is newer than its sources" >&2
  )
}

# --- Isolation --------------------------------------------------------------------
# oc_env: what every OpenCode process of these scripts runs with: no network
# of its own, no user plugins or skills, and the sidecar in $SIDECAR.
oc_env() {
  export OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1
  export OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_CLAUDE_CODE=1
  export OPENCODE_DISABLE_EXTERNAL_SKILLS=1 OPENCODE_DISABLE_EMBEDDED_WEB_UI=1 OPENCODE_DISABLE_PRUNE=1
  export HOOKWIRE_BIN=$SIDECAR
}

# oc_home DIR: an isolated home under DIR (HOME, the XDG directories, the
# sidecar's log file DIR/sidecar.log), with the OpenCode config directory
# $XDG_CONFIG_HOME/opencode ready for scripts/lib/opencode-config.mjs.
oc_home() {
  local dir=$1
  export HOME=$dir/home
  export XDG_CONFIG_HOME=$dir/xdg/config XDG_DATA_HOME=$dir/xdg/data
  export XDG_CACHE_HOME=$dir/xdg/cache XDG_STATE_HOME=$dir/xdg/state
  export HOOKWIRE_LOG_FILE=$dir/sidecar.log
  mkdir -p "$HOME" "$XDG_CONFIG_HOME/opencode/node_modules" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_STATE_HOME"
}

# oc_project DIR TEXT: a project directory with a README.md of one line.
oc_project() {
  mkdir -p "$1"
  printf '%s\n' "$2" >"$1/README.md"
}

# --- The fake LLM -------------------------------------------------------------------
# oc_fakellm_start DIR MAX_SECONDS [server.mjs options...]: starts
# scripts/fakellm/server.mjs logging into DIR/requests.jsonl; sets FAKELLM_PID
# and FAKELLM_PORT once it listens.
oc_fakellm_start() {
  local dir=$1 max=$2
  shift 2
  node "$ROOT/scripts/fakellm/server.mjs" "$@" --log "$dir/requests.jsonl" --port-file "$dir/port" \
    --max-seconds "$max" 2>"$dir/fakellm.err" &
  FAKELLM_PID=$!
  for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
  [ -s "$dir/port" ] || { log "FAIL: the fake LLM did not start"; cat "$dir/fakellm.err" >&2; exit 1; }
  FAKELLM_PORT=$(cat "$dir/port")
}

oc_fakellm_stop() {
  kill "$FAKELLM_PID" 2>/dev/null || true
  wait "$FAKELLM_PID" 2>/dev/null || true
  FAKELLM_PID=
}

# oc_config GENERATOR [options...]: runs the config generator (a script built
# on scripts/lib/opencode-config.mjs) to pre-seed $XDG_CONFIG_HOME/opencode
# for the fake LLM on $FAKELLM_PORT, with the shim's deadlines from
# HOOKWIRE_E2E_TIMEOUT_MS / HOOKWIRE_E2E_TRANSFORM_TIMEOUT_MS (default
# 1000 / 4000).
oc_config() {
  local generator=$1
  shift
  node "$generator" \
    --dir "$XDG_CONFIG_HOME/opencode" --port "$FAKELLM_PORT" --version "$OPENCODE_VERSION" "$@" \
    --shim "$ROOT/shim/dist/index.js" \
    --timeout-ms "${HOOKWIRE_E2E_TIMEOUT_MS:-1000}" --transform-timeout-ms "${HOOKWIRE_E2E_TRANSFORM_TIMEOUT_MS:-4000}"
  # An OpenCode that passes plugins no options (before 1.14): the shim reads
  # them from HOOKWIRE_OPTIONS (scripts/lib/opencode-config.mjs shimPlugin).
  if [ -f "$XDG_CONFIG_HOME/opencode/hookwire-options.json" ]; then
    HOOKWIRE_OPTIONS=$(cat "$XDG_CONFIG_HOME/opencode/hookwire-options.json")
    export HOOKWIRE_OPTIONS
  else
    unset HOOKWIRE_OPTIONS
  fi
}

# oc_session_of FILE: the first session id in the output of `opencode run --format json`.
oc_session_of() {
  node -e '
    const fs = require("fs");
    for (const l of fs.readFileSync(process.argv[1], "utf8").split("\n")) {
      if (!l.trim()) continue;
      try { const e = JSON.parse(l); const id = e.sessionID ?? e.part?.sessionID; if (id) { console.log(id); break; } } catch {}
    }' "$1"
}

# oc_version_below X.Y: whether $OPENCODE_VERSION is older than X.Y.
oc_version_below() {
  node -e 'const [a, b] = process.argv.slice(1).map((v) => v.split(".").map(Number));
    for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) process.exit((a[i] ?? 0) < (b[i] ?? 0) ? 0 : 1);
    process.exit(1)' "$OPENCODE_VERSION" "$1"
}

# oc_serve_delete SESSION: deletes a session through `opencode serve` on a
# free loopback port (DELETE /session/:id), then lets the server's plugins
# hear session.deleted for a few seconds before stopping it.
oc_serve_delete() {
  local port pid rc=1
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  "$OPENCODE" serve --hostname 127.0.0.1 --port "$port" </dev/null &
  pid=$!
  for _ in $(seq 150); do curl -sf "http://127.0.0.1:$port/session" >/dev/null 2>&1 && break; sleep 0.2; done
  if curl -sf -X DELETE "http://127.0.0.1:$port/session/$1"; then rc=0; fi
  sleep 3
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return "$rc"
}
