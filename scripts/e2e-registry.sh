#!/usr/bin/env bash
# Install by name, through a real npm registry (make test-registry):
#   1. verdaccio (npm package, installed once under $HOOKWIRE_CACHE) on
#      127.0.0.1, a free port, throwaway storage; hookwire-opencode* never
#      come from an uplink, anything else may be proxied to the npm registry
#      this machine uses
#   2. the tarballs of `make dist` (dist/npm/*.tgz) published to it
#   3. stock OpenCode (1.18.33, or HOOKWIRE_OPENCODE_VERSION) whose opencode.json says only
#      "plugin": ["hookwire-opencode"] (plus the fake LLM provider), the
#      registry set in ~/.npmrc of its isolated home: no HOOKWIRE_BIN, no
#      hookwire on PATH, no file:// path. OpenCode installs the plugin and
#      its platform package itself; two `opencode run`s of build, the second
#      continuing the first's session, must pass the e2e stock checks
#      (scripts/e2e-opencode-assert.mjs --stock-only: an alias resolving
#      across processes, the Resumable Sessions block, native-error guidance)
#      and `npx hookwire-opencode doctor` (the README's check step) before
#      the first run says installed but idle, after the second working
#   4. `opencode plugin hookwire-opencode` in a fresh home and project: it
#      installs from the same registry and adds the plugin to the project's
#      config; one run there loads it
#      On OpenCode 1.17+ run 1 lasts over a minute (the fake LLM holds its
#      final answer) and R5 checks one sidecar for the whole OpenCode process
#   5. OpenCode's TUI in tmux with the package in opencode.json and tui.json:
#      hookwire's sidebar section after build delegates and resumes, and a
#      misspelt option on screen; a slow subagent running, then stopped
#      with esc esc; six subagents listed; at 100x40 (no sidebar) the
#      palette's commands list the subagents and stop a running one; an
#      explorer rescued from a 429 by its fallback (one switch, rate-limit);
#      the figures of the first session against `opencode export`
# Checks R1-R5, D1-D2, P1-P2 and T1-T12 are scripts/e2e-registry-assert.mjs.
#
#   scripts/e2e-registry.sh [NPM_DIR]   (default dist/npm)
#
# Env: HOOKWIRE_CACHE (default $HOME/.cache/hookwire),
#      HOOKWIRE_E2E_KEEP=1 keeps the scratch directory (kept on failure too).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/opencode.sh
. "$ROOT/scripts/lib/opencode.sh"
NPM_DIR=$(cd "${1:-$ROOT/dist/npm}" && pwd)
RUN_TIMEOUT=${HOOKWIRE_E2E_RUN_TIMEOUT:-180}
VERDACCIO_VERSION=6.8.0
VERDACCIO_DIR=$CACHE_ROOT/verdaccio-$VERDACCIO_VERSION
VERDACCIO_PID=
UPLINK=$(npm config get registry)

oc_scratch registry HOOKWIRE_E2E_KEEP "registry test"
stop_verdaccio() {
  if [ -n "$VERDACCIO_PID" ]; then
    kill "$VERDACCIO_PID" 2>/dev/null || true
    wait "$VERDACCIO_PID" 2>/dev/null || true
  fi
  VERDACCIO_PID=
}
on_exit() {
  local rc=$?
  set +e
  stop_verdaccio
  (exit "$rc") # oc_cleanup reads the script's status from $?
  oc_cleanup
}
trap on_exit EXIT

MAIN_TGZ=$(ls "$NPM_DIR"/hookwire-opencode-[0-9]*.tgz 2>/dev/null | head -1)
[ -n "$MAIN_TGZ" ] || { log "FAIL: no hookwire-opencode-<version>.tgz in $NPM_DIR (run make dist)"; exit 1; }
VERSION=$(tar -xOzf "$MAIN_TGZ" package/package.json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')
echo "$VERSION" >"$WORK/version"
log "packages $VERSION from $NPM_DIR"

# --- 1. OpenCode and verdaccio, installed once into the cache ---------------------
oc_install
if [ ! -x "$VERDACCIO_DIR/node_modules/.bin/verdaccio" ]; then
  log "installing verdaccio@$VERDACCIO_VERSION into $VERDACCIO_DIR"
  mkdir -p "$VERDACCIO_DIR"
  # verdaccio 6.8 with node-fetch 2.7.0: what runs on Node 20 here (6.10 wants 22).
  echo "{\"name\":\"hookwire-verdaccio\",\"private\":true,\"dependencies\":{\"verdaccio\":\"$VERDACCIO_VERSION\"},\"overrides\":{\"node-fetch\":\"2.7.0\"}}" \
    >"$VERDACCIO_DIR/package.json"
  npm install --prefix "$VERDACCIO_DIR" --no-audit --no-fund --loglevel=error >&2
fi

REG=$WORK/registry
mkdir -p "$REG/storage"
PORT=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
REGISTRY=http://127.0.0.1:$PORT/
echo "$REGISTRY" >"$WORK/registry-url"
cat >"$REG/config.yaml" <<EOF
storage: $REG/storage
uplinks:
  upstream:
    url: $UPLINK
packages:
  'hookwire-opencode*':
    access: \$all
    publish: \$all
  '**':
    access: \$all
    publish: \$all
    proxy: upstream
log: { type: stdout, format: pretty, level: http }
EOF
"$VERDACCIO_DIR/node_modules/.bin/verdaccio" --config "$REG/config.yaml" --listen "127.0.0.1:$PORT" >"$REG/verdaccio.log" 2>&1 &
VERDACCIO_PID=$!
for _ in $(seq 150); do curl -sf "$REGISTRY-/ping" >/dev/null 2>&1 && break; sleep 0.2; done
curl -sf "$REGISTRY-/ping" >/dev/null || { log "FAIL: verdaccio did not start"; tail -20 "$REG/verdaccio.log" >&2; exit 1; }
log "verdaccio $VERDACCIO_VERSION on $REGISTRY (uplink for the rest: $UPLINK)"

# --- 2. Publish -----------------------------------------------------------------------
# npm 11 wants --tag for a prerelease; latest is what a bare name installs.
pids=()
for tgz in "$NPM_DIR"/*.tgz; do
  npm publish "$tgz" --registry "$REGISTRY" "--//127.0.0.1:$PORT/:_authToken=e2e" --tag latest \
    --ignore-scripts --loglevel=error >"$REG/publish-$(basename "$tgz").log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { log "FAIL: npm publish"; cat "$REG"/publish-*.log >&2; exit 1; }; done
log "published $(ls "$NPM_DIR"/*.tgz | wc -l) tarballs"

# --- 3. Isolation: nothing of hookwire's but the registry -----------------------------
SIDECAR=
oc_env
unset HOOKWIRE_BIN HOOKWIRE_RECORD
CLEAN_PATH=
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -n "$d" ] && [ ! -e "$d/hookwire" ] && CLEAN_PATH=${CLEAN_PATH:+$CLEAN_PATH:}$d
done
export PATH=$CLEAN_PATH
if command -v hookwire >/dev/null; then log "FAIL: hookwire is still on PATH: $(command -v hookwire)"; exit 1; fi

# home DIR: an isolated OpenCode home whose npm uses the local registry
# (~/.npmrc, npm's own user config) and a cache of its own.
home() {
  oc_home "$1"
  printf 'registry=%s\n' "$REGISTRY" >"$HOME/.npmrc"
  # OpenCode 1.3 and older install plugins with `bun add` (their own
  # binary as bun), which does not read ~/.npmrc but does read this.
  export NPM_CONFIG_REGISTRY=$REGISTRY
  export npm_config_cache=$1/npm-cache
  unset npm_config_registry
}

# watch_sidecars DIR FILE: until DIR/watching is removed, every second one
# line "<epoch ms> <pid>:<ppid> ..." of the hookwire processes running from
# DIR's plugin cache (the platform package's binary OpenCode installed), for
# R5: one OpenCode process, one sidecar, for the whole run.
watch_sidecars() {
  local dir=$1 out=$2
  while [ -e "$dir/watching" ]; do
    printf '%s %s\n' "$(date +%s%3N)" \
      "$(ps -eo pid=,ppid=,args= | awk -v p="$dir/xdg/cache/opencode/" 'index($3, p) == 1 && $3 ~ /\/bin\/hookwire$/ { printf "%s:%s ", $1, $2 }')" >>"$out"
    sleep 1
  done
}

# npx_doctor DIR NAME: `npx hookwire-opencode doctor` in DIR/project, as the
# README's check step runs it: npx installs the package from the local
# registry and its bin runs the platform package's binary. OpenCode's own
# command (node_modules/.bin/opencode of its npm install) is on PATH, so
# doctor reads its version from that package's package.json.
npx_doctor() {
  local dir=$1 name=$2
  log "npx hookwire-opencode doctor ($name)"
  set +e
  (cd "$dir/project" && PATH="$CACHE/node_modules/.bin:$PATH" timeout -k 5 "$RUN_TIMEOUT" npx hookwire-opencode doctor \
    </dev/null >"$dir/$name.out" 2>"$dir/$name.err")
  echo $? >"$dir/$name.rc"
  set -e
  log "npx hookwire-opencode doctor ($name) exited $(cat "$dir/$name.rc")"
}

# run DIR N PROMPT [opencode run options...]: one `opencode run` of build in DIR/project.
run() {
  local dir=$1 n=$2 prompt=$3 watcher limit=${RUN_LIMIT:-$RUN_TIMEOUT}
  shift 3
  log "opencode run $n in $(basename "$dir") (at most ${limit}s)"
  touch "$dir/watching"
  watch_sidecars "$dir" "$dir/sidecars-run$n.txt" &
  watcher=$!
  set +e
  date +%s%3N >"$dir/run$n.start"
  (cd "$dir/project" && HOOKWIRE_SHIM_TRACE=$dir/trace-run$n.jsonl timeout -k 5 "$limit" "$OPENCODE" run --format json \
    --agent build --model fake/fake-model "$@" "$prompt" </dev/null >"$dir/run$n.jsonl" 2>"$dir/run$n.err")
  echo $? >"$dir/run$n.rc"
  date +%s%3N >"$dir/run$n.end"
  set -e
  rm -f "$dir/watching"
  wait "$watcher" 2>/dev/null || true
  log "opencode run $n exited $(cat "$dir/run$n.rc") after $(( ($(cat "$dir/run$n.end") - $(cat "$dir/run$n.start")) / 1000 )) s"
}

# --- 4. The plugin by name in opencode.json: the e2e stock setup ----------------------
# HOOKWIRE_E2E_ONLY=tui runs the TUI part alone (while working on it; the
# other checks then fail for want of their runs).
if [ "${HOOKWIRE_E2E_ONLY:-}" != tui ]; then
START=$(date +%s)
STOCK=$WORK/stock
home "$STOCK"
export FAKELLM_EVENTS=$STOCK/fakellm-events.jsonl
oc_project "$STOCK/project" '# registry stock project'
# OpenCode 1.17+ call the ./server entry's setup about 30 s into a process
# (docs/OPENCODE.md): run 1's final answer is held so that the run lasts
# over a minute, and R5 checks it had one sidecar throughout.
HOLD_S=0
if ! oc_version_below 1.17; then HOLD_S=$(( ${HOOKWIRE_E2E_HOLD_MS:-65000} / 1000 )); export FAKELLM_HOLD_FINAL_MS=$((HOLD_S * 1000)); fi
oc_fakellm_start "$STOCK" $((2 * RUN_TIMEOUT + HOLD_S + 60))
unset FAKELLM_HOLD_FINAL_MS
node "$ROOT/scripts/e2e-registry-config.mjs" --dir "$XDG_CONFIG_HOME/opencode" --port "$FAKELLM_PORT" --version "$OPENCODE_VERSION"
npx_doctor "$STOCK" doctor-before
RUN_LIMIT=$((RUN_TIMEOUT + HOLD_S)) run "$STOCK" 1 "STOCK_RUN1: Look around the repo. AGENT_MARKER:build"
PARENT=$(oc_session_of "$STOCK/run1.jsonl")
echo "$PARENT" >"$STOCK/parent"
if [ -n "$PARENT" ]; then
  run "$STOCK" 2 "STOCK_RUN2: Pick up where you left off." --session "$PARENT"
else
  log "no session id in run 1's output"
fi
oc_fakellm_stop
npx_doctor "$STOCK" doctor-after
log "by name in opencode.json: $(($(date +%s) - START)) s"

# --- 5. opencode plugin hookwire-opencode ---------------------------------------------
# OpenCode 1.3 and older have no `opencode plugin` command: P1-P2 are
# skipped there (command/skipped says why).
START=$(date +%s)
CMD=$WORK/command
if oc_version_below 1.14; then
  mkdir -p "$CMD"
  echo "OpenCode $OPENCODE_VERSION has no 'opencode plugin' command" >"$CMD/skipped"
  log "$(cat "$CMD/skipped"); P1-P2 skipped"
else
home "$CMD"
export FAKELLM_EVENTS=$CMD/fakellm-events.jsonl
oc_project "$CMD/project" '# registry plugin-command project'
oc_fakellm_start "$CMD" $((RUN_TIMEOUT + 60))
node "$ROOT/scripts/e2e-registry-config.mjs" --dir "$XDG_CONFIG_HOME/opencode" --port "$FAKELLM_PORT" --version "$OPENCODE_VERSION" --no-plugin
log "opencode plugin hookwire-opencode"
set +e
(cd "$CMD/project" && timeout -k 5 "$RUN_TIMEOUT" "$OPENCODE" plugin hookwire-opencode </dev/null >"$CMD/plugin.out" 2>"$CMD/plugin.err")
echo $? >"$CMD/plugin.rc"
set -e
log "opencode plugin exited $(cat "$CMD/plugin.rc")"
if [ -f "$CMD/project/.opencode/opencode.json" ]; then
  cp "$CMD/project/.opencode/opencode.json" "$CMD/plugin-config.json"
  # The project config directory it made would otherwise get OpenCode's own
  # npm install of @opencode-ai/plugin at the next start (docs/OPENCODE.md).
  node "$ROOT/scripts/e2e-registry-config.mjs" --seed "$CMD/project/.opencode" --version "$OPENCODE_VERSION"
  run "$CMD" 1 "STOCK_RUN1: Look around the repo. AGENT_MARKER:build"
fi
oc_fakellm_stop
log "opencode plugin: $(($(date +%s) - START)) s"
fi
fi # HOOKWIRE_E2E_ONLY
# --- 6. The TUI: hookwire's section in the sidebar, read from the screen -----------
# OpenCode's real TUI in tmux (220x50: the sidebar shows from 121 columns),
# the package by name in opencode.json (with a misspelt option) and in
# tui.json, stock agents; build delegates to explore and general
# (STOCK_RUN1), then resumes both (STOCK_RUN2). The screen is read with
# capture-pane into TUI/screen-*.txt for T1-T12 (e2e-registry-assert.mjs).
TUI=$WORK/tui
tui_pane() { tmux -L "$TMUX_SOCKET" capture-pane -p -t hw 2>/dev/null || true; }
# tui_wait NAME SECONDS NODE_TEST: captures until the test (a JS expression
# over `s`, the screen) holds, at most SECONDS; the last capture is kept.
# In the test, `side` is the sidebar's columns (the last 42 of a line at
# 220: hookwire's section), `main` the rest (OpenCode's own view). The
# moment it held (epoch ms) goes to TUI/screen-NAME.at.
tui_wait() {
  local name=$1 secs=$2 cond=$3 end=$(( $(date +%s) + $2 ))
  while :; do
    tui_pane >"$TUI/screen-$name.txt"
    if node -e 'const s=require("fs").readFileSync(process.argv[1],"utf8"); const ls=s.split("\n"); const side=ls.map((l)=>l.slice(178)).join("\n"), main=ls.map((l)=>l.slice(0,178)).join("\n"); process.exit(('"$cond"')?0:1)' "$TUI/screen-$name.txt"; then
      date +%s%3N >"$TUI/screen-$name.at"
      echo "$(( secs - (end - $(date +%s)) ))" >"$TUI/screen-$name.secs"
      return 0
    fi
    [ "$(date +%s)" -ge "$end" ] && { echo "timeout" >"$TUI/screen-$name.secs"; return 1; }
    sleep 0.5
  done
}
# The TUI checks drive tmux, and T11 reads OpenCode's session tree with
# sqlite3: a new machine has neither, so both come from Debian's packages.
if ! oc_version_below 1.18 && { ! command -v tmux >/dev/null || ! command -v sqlite3 >/dev/null; }; then
  log "tmux or sqlite3 not found; installing Debian's tmux and sqlite3"
  if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq tmux sqlite3 >/dev/null; } || true
fi
if oc_version_below 1.18 || ! command -v tmux >/dev/null; then
  mkdir -p "$TUI"
  echo "OpenCode $OPENCODE_VERSION has no TUI plugins (or no tmux here)" >"$TUI/skipped"
  log "$(cat "$TUI/skipped"); T1-T12 skipped"
else
  START=$(date +%s)
  home "$TUI"
  export FAKELLM_EVENTS=$TUI/fakellm-events.jsonl
  oc_project "$TUI/project" '# registry TUI project'
  oc_fakellm_start "$TUI" $((3 * RUN_TIMEOUT))
  node "$ROOT/scripts/e2e-registry-config.mjs" --dir "$XDG_CONFIG_HOME/opencode" --port "$FAKELLM_PORT" --version "$OPENCODE_VERSION" --tui
  TMUX_SOCKET=hookwire-tui-$$
  tmux -L "$TMUX_SOCKET" new-session -d -s hw -x 220 -y 50 \
    "cd '$TUI/project' && HOOKWIRE_SHIM_TRACE='$TUI/trace.jsonl' '$OPENCODE' --model fake/fake-model --agent build 2>'$TUI/opencode.err'"
  set +e
  tui_wait ready "$RUN_TIMEOUT" 's.includes("ctrl+p")'
  READY=$(date +%s)
  tmux -L "$TMUX_SOCKET" send-keys -t hw -l "STOCK_RUN1: Look around the repo. AGENT_MARKER:build"
  tmux -L "$TMUX_SOCKET" send-keys -t hw Enter
  tui_wait typo 30 's.includes("cacheStabel")'
  echo $(( $(date +%s) - READY )) >"$TUI/typo-after-ready.secs"
  tui_wait run1 "$RUN_TIMEOUT" 's.includes("exp-1") && s.includes("gen-1") && s.includes("BUILD_RUN1_DONE")'
  tmux -L "$TMUX_SOCKET" send-keys -t hw -l "STOCK_RUN2: Pick up where you left off."
  tmux -L "$TMUX_SOCKET" send-keys -t hw Enter
  tui_wait run2 "$RUN_TIMEOUT" 's.includes("BUILD_RUN2_DONE") && /exp-1\*? explore done/.test(s)'
  # T5-T6: a subagent that runs for a minute: running with its label in
  # the section soon after OpenCode shows its task; esc esc stops it.
  tmux -L "$TMUX_SOCKET" send-keys -t hw -l "STOCK_TUI_SLOW: audit slowly."
  tmux -L "$TMUX_SOCKET" send-keys -t hw Enter
  tui_wait slow-task 60 'main.includes("Slow audit")'
  tui_wait slow-running 30 '/~ (gen-\d+\*? )?general running/.test(side) && side.includes("Slow audit")'
  tmux -L "$TMUX_SOCKET" send-keys -t hw Escape
  sleep 0.3
  tmux -L "$TMUX_SOCKET" send-keys -t hw Escape
  date +%s%3N >"$TUI/esc.at"
  tui_wait slow-stopped 20 '/- (gen-\d+\*? )?general (cancelled|interrupted)/.test(side) && !/running/.test(side)'
  # T10-T11: explorer on a model that answers 429, rescued by its fallback
  # (one switch, rate-limit); then, the session's subagents all finished,
  # the figures on screen (read a few seconds later, so that a second
  # switch or a late figure would show) against `opencode export`.
  sleep 1
  tmux -L "$TMUX_SOCKET" send-keys -t hw -l "STOCK_TUI_LIMIT: look despite the limit."
  tmux -L "$TMUX_SOCKET" send-keys -t hw Enter
  tui_wait limit 90 'main.includes("BUILD_LIMIT_DONE") && /✓ (exp-\d+\*? )?explorer done/.test(side) && side.includes("↪")'
  sleep 3
  tui_wait limit-settled 5 'true'
  # T7: six subagents in a new session, all listed.
  sleep 2
  tmux -L "$TMUX_SOCKET" send-keys -t hw -l "/new"
  sleep 1
  tmux -L "$TMUX_SOCKET" send-keys -t hw Enter
  sleep 2
  tmux -L "$TMUX_SOCKET" send-keys -t hw -l "STOCK_TUI_SIX: look at six parts. AGENT_MARKER:build"
  tmux -L "$TMUX_SOCKET" send-keys -t hw Enter
  tui_wait six "$RUN_TIMEOUT" 's.includes("BUILD_SIX_DONE") && [1,2,3,4,5,6].every((i) => side.includes("Six part " + i))'
  set -e
  tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null || true
  sleep 2
  # T8: at 100x40 (no sidebar), a new TUI process on the same session: the
  # palette's commands list its subagents and stop a running one.
  tmux -L "$TMUX_SOCKET" new-session -d -s hw -x 100 -y 40 \
    "cd '$TUI/project' && HOOKWIRE_SHIM_TRACE='$TUI/trace-narrow.jsonl' '$OPENCODE' --continue --model fake/fake-model --agent build 2>'$TUI/opencode-narrow.err'"
  set +e
  tui_wait narrow-ready "$RUN_TIMEOUT" 's.includes("ctrl+p") && s.includes("BUILD_SIX_DONE")'
  tmux -L "$TMUX_SOCKET" send-keys -t hw C-p
  sleep 1
  tmux -L "$TMUX_SOCKET" send-keys -t hw -l "hookwire: open"
  sleep 1
  tmux -L "$TMUX_SOCKET" send-keys -t hw Enter
  tui_wait narrow-jump 15 's.includes("hookwire: subagents") && [1,2,3,4,5,6].every((i) => s.includes("Six part " + i))'
  tmux -L "$TMUX_SOCKET" send-keys -t hw Escape
  sleep 1
  tmux -L "$TMUX_SOCKET" send-keys -t hw -l "STOCK_TUI_STOP: sweep slowly."
  tmux -L "$TMUX_SOCKET" send-keys -t hw Enter
  tui_wait narrow-task 60 's.includes("Slow sweep")'
  sleep 2
  tmux -L "$TMUX_SOCKET" send-keys -t hw C-p
  sleep 1
  tmux -L "$TMUX_SOCKET" send-keys -t hw -l "hookwire: stop"
  sleep 1
  tmux -L "$TMUX_SOCKET" send-keys -t hw Enter
  tui_wait narrow-stop 15 '/general running Slow sweep/.test(s)'
  tmux -L "$TMUX_SOCKET" send-keys -t hw Enter
  date +%s%3N >"$TUI/stop.at"
  tui_wait narrow-stopped 30 's.includes("BUILD_STOP_DONE")'
  set -e
  tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null || true
  oc_fakellm_stop
  # T11: the first session's tree as OpenCode stores it (its parent is the
  # root with the explorer child), each session as `opencode export` prints it.
  if command -v sqlite3 >/dev/null; then
    sqlite3 -readonly -json "$XDG_DATA_HOME/opencode/opencode.db" 'select id, parent_id, title from session' >"$TUI/sessions.json" 2>"$TUI/sessions.err" || true
    exports=()
    for id in $(node -e '
      const rows = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8") || "[]");
      const parent = rows.find((r) => rows.some((c) => c.parent_id === r.id && /^Limited look/.test(c.title)))?.id;
      if (parent) for (const r of rows) if (r.id === parent || r.parent_id === parent) console.log(r.id);' "$TUI/sessions.json"); do
      (cd "$TUI/project" && timeout -k 5 60 "$OPENCODE" export "$id" --pure </dev/null >"$TUI/export-$id.json" 2>"$TUI/export-$id.err") &
      exports+=($!)
    done
    for p in "${exports[@]}"; do wait "$p" || true; done
  else
    echo "no sqlite3 to read OpenCode's session tree" >"$TUI/sessions.err"
  fi
  log "TUI: $(($(date +%s) - START)) s"
fi
stop_verdaccio

# --- 7. Assertions ------------------------------------------------------------------------
RC=0
node "$ROOT/scripts/e2e-opencode-assert.mjs" "$WORK" --stock-only || RC=$?
node "$ROOT/scripts/e2e-registry-assert.mjs" "$WORK" || RC=$?
exit "$RC"
