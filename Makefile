# hookwire: the two commands a newcomer runs are `make demo` and `make test`.

# Every download (Go modules, the shim's npm packages, OpenCode itself) is
# cached under one directory that the scripts and CI reuse.
HOOKWIRE_CACHE ?= $(HOME)/.cache/hookwire
export HOOKWIRE_CACHE
export GOMODCACHE ?= $(HOOKWIRE_CACHE)/go-mod
export GOFLAGS ?= -mod=mod
export npm_config_cache ?= $(HOOKWIRE_CACHE)/npm

GO      ?= go
BIN     := bin/hookwire
# Empty outside git: the binary then reports a development build itself.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION)

# Short fuzz pass for `make test`/CI; `make fuzz` runs each target longer.
FUZZTIME_SHORT ?= 5s
FUZZTIME       ?= 60s

.PHONY: all build demo test test-go lint test-shim test-vscode test-nvim test-e2e test-cache fuzz fuzz-short bench soak clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/hookwire

demo: build
	./$(BIN) demo

## test: everything CI runs: lint, Go tests with -race (unit, replay of
## testdata/transcripts, process and fault tests, a short soak), a short
## fuzz pass, the shim's tests, the VS Code extension's tests, the Neovim
## plugin's tests in headless Neovim, the real-OpenCode end-to-end test
## and the prompt-cache measurement through real OpenCode.
test: lint test-go fuzz-short test-shim test-vscode test-nvim test-e2e test-cache
	@echo "make test: all passed"

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test-go:
	$(GO) test -race -count=1 ./...

test-shim: build
	cd shim && npm ci --no-audit --no-fund && npm run build && HOOKWIRE_BIN=$(CURDIR)/$(BIN) npm test

# The VS Code extension's tests: node --test on a fake vscode module, with
# the real `hookwire observe` and `hookwire serve`.
test-vscode: build
	cd editors/vscode && npm ci --no-audit --no-fund && npm run build && HOOKWIRE_BIN=$(CURDIR)/$(BIN) npm test

# The Neovim plugin in real headless Neovim (installs Debian's neovim with
# apt when nvim is missing).
test-nvim: build
	HOOKWIRE_BIN=$(CURDIR)/$(BIN) bash scripts/test-nvim.sh

test-e2e: build
	HOOKWIRE_BIN=$(CURDIR)/$(BIN) bash scripts/e2e-opencode.sh

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

clean:
	rm -rf bin shim/dist
