# Docket's developer commands. `make` (or `make help`) lists them.
# The real work lives in scripts/test.sh, which also pins the tool versions.

GO      ?= go
BIN     := $(CURDIR)/bin
PKGS    ?= ./... ./queue/... ./queue/enginetest/... ./queue/postgres/... ./queue/sqlite/...
BENCH   ?= .
COUNT   ?= 1
ARGS    ?=
FUZZTIME ?= 1m
FUZZ    ?= .
SOAK_JOBS ?= 1000000
SOAK_OUT  ?= $(CURDIR)/docs/soak
# As scripts/test.sh (RACE_GCFLAGS there): SQLite's engine, C translated to Go, left out of -race.
RACE_GCFLAGS := "-gcflags=modernc.org/...=-d=checkptr=0" "-gcflags=modernc.org/sqlite/lib=-race=false -d=checkptr=0"

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@echo "Usage: make <target>   (variables: PKGS=$(PKGS) BENCH=$(BENCH) COUNT=$(COUNT) ARGS=)"
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-11s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: test
test: ## Everything CI runs: install what is missing, go vet, lint, go test -race (scripts/test.sh)
	scripts/test.sh

.PHONY: test-race
test-race: ## Only go test -race (installs PostgreSQL if missing), for PKGS
	scripts/test.sh --only setup,test $(PKGS)

.PHONY: test-short
test-short: ## go vet + go test -race -short, no lint, for PKGS
	scripts/test.sh --skip lint,nested --short $(PKGS)

.PHONY: test-browser
test-browser: ## The dashboard's tests in real headless Chromium and Firefox (installs chromium, firefox-esr if missing)
	GOTESTFLAGS='-run TestDashboard' scripts/test.sh --only setup,test ./web/... ./cmd/docket/

.PHONY: test-nightly
test-nightly: setup ## The nightly tier: the chaos tier at full size, every smoke scenario, the bomb tests at production size (CONTRIBUTING.md)
	$(GO) test -race $(RACE_GCFLAGS) -count=1 -tags chaos -timeout 45m ./chaos/...
	$(GO) test -race $(RACE_GCFLAGS) -count=1 -tags nightly -run '^TestProcessor_BombTable$$' ./pipeline/
	$(GO) test -count=1 -tags nightly -run '^(TestExtract_BombRSS|TestProcessor_BombRSS)$$' ./pipeline/ ./pipeline/extract/

.PHONY: fuzz
fuzz: ## Every fuzz target for FUZZTIME each (default 1m), -parallel 2; FUZZ=regexp picks targets
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' . | sort); do \
		pkg=./$$(dirname $${f#./}); \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "$$t" | grep -Eq -- '$(FUZZ)' || continue; \
			echo "== $$t ($$pkg) for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -parallel 2 $$pkg; \
		done; \
	done

.PHONY: chaos-smoke
chaos-smoke: ## Chaos smoke tier (in make test too): small variants of the faults, mostly sleeping ones beside the others (~2 min on a quiet 2-core box; docs/reliability.md)
	$(GO) test -race $(RACE_GCFLAGS) -count=1 -timeout 20m ./chaos/...

.PHONY: chaos
chaos: ## Full chaos tier (-tags chaos): smoke + _Full/_Medium sizes, the notify and XID measurements, netns partition (~25-30 min; RUN=regexp)
	$(GO) test -race $(RACE_GCFLAGS) -count=1 -tags chaos -timeout 45m $(if $(RUN),-run '$(RUN)') ./chaos/...

.PHONY: soak
soak: ## Churn soak (-tags soak, no -race): SOAK_JOBS (default 10^6) through PostgreSQL; CSV and SVG curves to SOAK_OUT (~20-70 min; docs/reliability.md)
	SOAK_JOBS=$(SOAK_JOBS) SOAK_OUT=$(SOAK_OUT) $(GO) test -count=1 -tags soak -timeout 3h -run '^TestSoak$$' -v ./chaos/

.PHONY: lint
lint: ## golangci-lint (pinned, built into ./bin on first use) over PKGS and nested modules
	scripts/test.sh --only lint,nested $(PKGS)

.PHONY: tools
tools: ## Build the pinned golangci-lint into ./bin
	scripts/test.sh --only tools

.PHONY: setup
setup: ## Install PostgreSQL 15, the postgres user and Chromium if missing (as root)
	scripts/test.sh --only setup

.PHONY: bench
bench: setup ## Go benchmarks over the module (BENCH=regexp COUNT=n PKGS=...)
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count $(COUNT) $(PKGS)

.PHONY: bench-compare
bench-compare: ## docket bench vs River's on a throwaway durable PostgreSQL, 3 runs, medians (RUNS= SCENARIOS= RIVER_DEFAULTS=drain)
	scripts/bench-compare.sh

.PHONY: bench-docket
bench-docket: ## docket bench only (all scenarios), same server set-up, 3 runs, medians (RUNS= SCENARIOS= JOBS=)
	scripts/bench-compare.sh --docket-only

.PHONY: build
build: ## Build bin/docket
	$(GO) build -o $(BIN)/docket ./cmd/docket

.PHONY: run
run: ## Run `docket serve` on embedded defaults (ARGS="--listen :9090" to add flags)
	$(GO) run ./cmd/docket serve $(ARGS)
