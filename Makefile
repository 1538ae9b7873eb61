# hookwire: the two commands a newcomer runs are `make demo` and `make test`.

# Every download (Go modules, the shim's npm packages, OpenCode itself) is
# cached under one directory that the scripts and CI reuse.
HOOKWIRE_CACHE ?= $(HOME)/.cache/hookwire
export HOOKWIRE_CACHE
export GOMODCACHE ?= $(HOOKWIRE_CACHE)/go-mod
export GOFLAGS ?= -mod=mod -trimpath
# Plain builds (vet, `make build`, the tests' sidecar binaries) compile as the linux/amd64 release build does (no cgo, -trimpath),
# so from an empty build cache the packages they share with it (modernc's
# SQLite above all, about 75 CPU-seconds a configuration) are compiled
# once; -race needs cgo and turns it back on. Under -trimpath Go leaves
# -ldflags out of the build info (golang/go#52372): doctor reads make's
# -X main.version from the binary's symbols instead (cmd/hookwire/stamp.go).
export CGO_ENABLED ?= 0
export npm_config_cache ?= $(HOOKWIRE_CACHE)/npm

GO      ?= go
BIN     := bin/hookwire
# The nearest v* tag (git describe), else 0.0.0-dev+g<commit>; empty
# outside git: the binary then reports a development build itself
# (scripts/version.sh).
VERSION ?= $(shell bash scripts/version.sh)
LDFLAGS := -X main.version=$(VERSION)

# `make dist`: the release artifacts. The binaries are the same bytes for the
# same commit: no cgo, no paths (-trimpath), no VCS stamping (the version
# comes from make), no build id, and the Go settings that pick instructions
# pinned; only the Go toolchain's own version remains an input.
DIST         := dist
DIST_VERSION := $(or $(VERSION),0.0.0-dev)
NPM_VERSION   = $(shell bash scripts/version.sh --npm '$(DIST_VERSION)')
DIST_TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64
DIST_LDFLAGS := -s -w -buildid= -X main.version=$(DIST_VERSION)
DIST_GOENV   := CGO_ENABLED=0 GOFLAGS=-mod=mod GOAMD64=v1 GOARM64=v8.0 GOEXPERIMENT= GOTOOLCHAIN=local

# The OpenCode versions the real-OpenCode tests run (README's compatibility
# table): `make test` runs the oldest supported and the latest verified;
# `make test-compat` adds the ones in between. Each is installed once under
# $(HOOKWIRE_CACHE)/opencode-<version>.
OPENCODE_OLDEST  ?= 1.1.53
OPENCODE_LATEST  ?= 1.18.33
OPENCODE_BETWEEN ?= 1.3.2 1.15.13

# Short fuzz pass for `make test`/CI; `make fuzz` runs each target longer.
FUZZTIME_SHORT ?= 5s
FUZZTIME       ?= 60s

.PHONY: all build demo test test-go lint test-shim test-vscode test-nvim test-e2e test-cache fuzz fuzz-short bench soak load clean \
	dist dist-bin dist-npm dist-vsix test-dist test-registry test-compat

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/hookwire

demo: build
	./$(BIN) demo

## test: everything CI runs: lint, Go tests with -race (unit, replay of
## testdata/transcripts, process and fault tests, a short soak), a short
## fuzz pass, the shim's tests, the VS Code extension's tests, the Neovim
## plugin's tests in headless Neovim, the real-OpenCode end-to-end test,
## the prompt-cache measurement through real OpenCode, the release build's
## reproducibility and OpenCode installing the plugin by name from a local
## npm registry. The real-OpenCode runs use OpenCode $(OPENCODE_OLDEST) and
## $(OPENCODE_LATEST); `make test-compat` adds the versions in between.
## Each part runs as its own make and prints its time, so a slow CI run
## says where its minutes went. After the plain build that most parts share,
## the parts run in two lanes side by side (scripts/test-lanes.sh), split
## so that on two cores they end together: the first is the CPU-bound Go
## lane (vet, the race detector, fuzzing), then the Node suites and
## test-cache; the second waits mostly on OpenCode, the fake LLM and npm,
## with the dist build (whose cache test-registry's `make dist` reuses) in
## between.
## Each part's output is printed whole when it ends; TEST_JOBS=1 runs them
## one after another, their output as it comes.
TEST_LANE_1 := lint test-go fuzz-short test-shim test-vscode test-nvim test-cache
TEST_LANE_2 := test-e2e test-dist test-registry
test:
	@MAKE="$(MAKE)" bash scripts/test-lanes.sh build -- "$(TEST_LANE_1)" "$(TEST_LANE_2)"

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# An explicit -timeout: the suite takes a few minutes on CI's 2 cores, and
# a stall should fail with its own message (the soaks' watchdog) or this
# dump, not at go test's silent 10-minute default on a loaded machine.
#
# Then the volume tests (named TestVolume*, internal/racetest) run in a
# plain pass: under -race they skip, since the race detector slows
# modernc's SQLite 10 to 25 times and they check sizes and counts, not
# goroutines (from minutes of the race pass to seconds).
VOLUME_PKGS = $$(grep -rl --include='*_test.go' 'racetest.Volume(' . | xargs -n1 dirname | sort -u)
test-go:
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -timeout 10m -run '^TestVolume' $(VOLUME_PKGS)

test-shim: build
	cd shim && npm ci --no-audit --no-fund && HOOKWIRE_BIN=$(CURDIR)/$(BIN) npm test

# The VS Code extension's tests: node --test on a fake vscode module, with
# the real `hookwire observe` and `hookwire serve`.
test-vscode: build
	cd editors/vscode && npm ci --no-audit --no-fund && HOOKWIRE_BIN=$(CURDIR)/$(BIN) npm test

# The Neovim plugin in real headless Neovim (installs Debian's neovim with
# apt when nvim is missing).
test-nvim: build
	HOOKWIRE_BIN=$(CURDIR)/$(BIN) bash scripts/test-nvim.sh

# The real-OpenCode end-to-end tests: hooks and sessions on the oldest
# supported and the latest verified OpenCode, then model fallback for
# subagents (issue 11) and runtime fallback off a rate-limited model
# (issue 21) on the latest.
test-e2e: build
	HOOKWIRE_OPENCODE_VERSION=$(OPENCODE_LATEST) HOOKWIRE_BIN=$(CURDIR)/$(BIN) bash scripts/e2e-opencode.sh
	HOOKWIRE_OPENCODE_VERSION=$(OPENCODE_OLDEST) HOOKWIRE_BIN=$(CURDIR)/$(BIN) bash scripts/e2e-opencode.sh
	HOOKWIRE_OPENCODE_VERSION=$(OPENCODE_LATEST) HOOKWIRE_BIN=$(CURDIR)/$(BIN) bash scripts/e2e-models.sh
	HOOKWIRE_OPENCODE_VERSION=$(OPENCODE_LATEST) HOOKWIRE_BIN=$(CURDIR)/$(BIN) bash scripts/e2e-shared.sh
	HOOKWIRE_OPENCODE_VERSION=$(OPENCODE_LATEST) HOOKWIRE_BIN=$(CURDIR)/$(BIN) bash scripts/e2e-fallback.sh

test-cache: build
	HOOKWIRE_BIN=$(CURDIR)/$(BIN) bash scripts/cache-breaks.sh

fuzz-short:
	FUZZTIME=$(FUZZTIME_SHORT) bash scripts/fuzz.sh

fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

bench: build
	bash scripts/bench.sh

soak: build
	bash scripts/soak.sh

## load: the cross-process load test (cmd/hookwire/load_full_test.go): 8
## `hookwire serve` processes on one state database at full rate for 30 s,
## then 4; prints p50/p99/max, the share of hook calls over the shim's
## 250 ms deadline, the WAL's peak size and what was lost, and fails when
## p99 is 100 ms or more, over 0.1% pass 250 ms, anything is lost or the
## WAL passes its bound. LOAD_BASELINE=path/to/hookwire measures that build
## first, in the same run, and prints the ratios. `make test` runs a 3 s
## pass (TestLoadShort: nothing lost, the WAL bound).
load:
	CGO_ENABLED=1 HOOKWIRE_LOAD_BASELINE=$(LOAD_BASELINE) $(GO) test -tags load -run '^TestLoad$$' -count=1 -timeout 20m -v ./cmd/hookwire/

## dist: the release artifacts in dist/ (git-ignored): the five binaries
## (hookwire-<npm version>-<goos>-<goarch>[.exe]), the npm packages
## (dist/npm/*.tgz: hookwire-opencode and one per platform), the VS Code
## extension's .vsix and SHA256SUMS (`cd dist && sha256sum -c SHA256SUMS`).
## GoReleaser is not used: v2 needs Go >= 1.27.1 (this module builds with
## 1.26), and these are five `go build`s and an `npm pack`.
dist: dist-bin dist-npm dist-vsix
	cd $(DIST) && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS
	@echo "dist: $(DIST_VERSION) (npm $(NPM_VERSION))"; cd $(DIST) && ls -l $$(cut -c67- SHA256SUMS)

dist-bin:
	rm -rf $(DIST) && mkdir -p $(DIST)
	@set -e; for t in $(DIST_TARGETS); do \
	  os=$${t%/*}; arch=$${t#*/}; ext=; [ $$os = windows ] && ext=.exe; \
	  out=$(DIST)/hookwire-$(NPM_VERSION)-$$os-$$arch$$ext; echo "go build $$out"; \
	  env $(DIST_GOENV) GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -buildvcs=false \
	    -ldflags "$(DIST_LDFLAGS)" -o $$out ./cmd/hookwire; \
	done

# npm ci only when node_modules is missing or older than the lock file.
NPM_CI := { [ -f node_modules/.package-lock.json ] && [ ! package-lock.json -nt node_modules/.package-lock.json ]; } || \
	npm ci --no-audit --no-fund --loglevel=error

dist-npm: dist-bin
	cd shim && $(NPM_CI) && npm run --silent build
	node scripts/npm-packages.mjs --version $(NPM_VERSION) --bin $(DIST) --out $(DIST)/npm

# The .vsix, from the editors issue's `npm run package` (vsce); skipped with
# a message when that step is not in the tree.
dist-vsix: dist-bin
	@if grep -q '"package":' editors/vscode/package.json 2>/dev/null; then \
	  cd editors/vscode && $(NPM_CI) && \
	  npm run --silent package -- --out ../../$(DIST)/; \
	else echo "dist: no 'npm run package' in editors/vscode; the .vsix is left out"; fi

## test-dist: `make dist` in a fresh clone of HEAD has the five binaries in
## their OS's format, npm tarballs of the right shape and a SHA256SUMS that
## verifies; a second clone elsewhere, with an empty Go build cache, builds
## the same bytes.
test-dist:
	bash scripts/test-dist.sh

## test-registry: OpenCode installs hookwire-opencode by name from a local
## npm registry (verdaccio, installed once under $HOOKWIRE_CACHE) holding
## dist/npm, and the e2e stock checks pass; `opencode plugin
## hookwire-opencode` too.
test-registry: dist
	HOOKWIRE_OPENCODE_VERSION=$(OPENCODE_LATEST) bash scripts/e2e-registry.sh $(DIST)/npm
	HOOKWIRE_OPENCODE_VERSION=$(OPENCODE_OLDEST) bash scripts/e2e-registry.sh $(DIST)/npm

## test-compat: the real-OpenCode e2e and the install by name on the
## OpenCode versions between the oldest and the latest that README's
## compatibility table lists (OPENCODE_BETWEEN, space-separated).
test-compat: build dist
	@set -e; for v in $(OPENCODE_BETWEEN); do \
	  HOOKWIRE_OPENCODE_VERSION=$$v HOOKWIRE_BIN=$(CURDIR)/$(BIN) bash scripts/e2e-opencode.sh; \
	  HOOKWIRE_OPENCODE_VERSION=$$v bash scripts/e2e-registry.sh $(DIST)/npm; \
	done
	@echo "make test-compat: all passed ($(OPENCODE_BETWEEN))"

clean:
	rm -rf bin shim/dist $(DIST)
