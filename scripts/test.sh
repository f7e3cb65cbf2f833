#!/usr/bin/env bash
# scripts/test.sh: Docket's one test command (`make test` runs it; so does CI via .ci/run).
#
# On a fresh Debian machine with Go installed, as root or not, it prepares what the
# tests need, then runs them, stopping at the first failure:
#
#   setup  PostgreSQL 15 server binaries (initdb on PATH, else /usr/lib/postgresql/15/bin,
#          else `apt-get install postgresql-15`); a C compiler for -race; as root, a
#          `postgres` OS user (queue/postgres/pgtest runs initdb through `runuser -u postgres`);
#          Chromium for the dashboard's browser test (else `apt-get install chromium`);
#          libfaketime for the chaos clock-skew test (else `apt-get install libfaketime`)
#          Firefox for the dashboard's Firefox tests (else `apt-get install firefox-esr`);
#          Tesseract with English for the OCR tests (else `apt-get install tesseract-ocr
#          tesseract-ocr-eng`)
#   tools  golangci-lint and versitygw (the S3 server the blob tests start), pinned, built
#          from source once per machine into a cache outside the checkout
#          ($DOCKET_TOOLS_CACHE, default ~/.cache/docket-tools) and linked into ./bin, and
#          Azurite (the Azure Blob Storage emulator the blob tests start), the pinned npm
#          package installed there by npm (setup installs node and npm when missing); when
#          the cache lacks them, they build or install in the background from the script's start
#   vet    go mod tidy -diff in each workspace module (fails when a go.mod or go.sum is untidy),
#          then go vet
#   lint   golangci-lint run (implies tools)
#   test   go test -race -json -p 2 -parallel 4, reported by internal/cmd/testreport: a line
#          per package, failed tests' output, the ten slowest tests and the wall time; a
#          package over its budget in scripts/test-budgets.txt fails the run. Then the few
#          tests that skip under -race (NORACE_RUN below) in a pass without it.
#   nested every nested Go module outside the workspace (e.g. bench/river): go vet, go build,
#          golangci-lint; its tests and benchmarks are not run
#
# Usage: scripts/test.sh [--skip STEP]... [--only STEP]... [--short] [-h] [PACKAGES...]
#   --skip STEP  leave out a step (repeatable, or comma-separated: --skip lint,nested)
#   --only STEP  run only these steps (repeatable, or comma-separated)
#   --short      pass -short to go test
#   PACKAGES     packages for vet, lint and test (default: every package of the workspace's modules,
#                ALL_PKGS below);
#                giving any leaves out the nested step
#
# Environment:
#   GOTESTFLAGS          extra go test flags, e.g. GOTESTFLAGS='-run TestClient -v'
#   DOCKET_TEST_P        go test -p (default 2)
#   DOCKET_TEST_PARALLEL go test -parallel (default 4); chaos raises its own, pipeline and extract
#                        lowers its own (see their TestMain)
#   DOCKET_TEST_TIMEOUT  go test -timeout, a hang's bound per package (default 10m); the
#                        budgets in scripts/test-budgets.txt are the tighter check
#   DOCKET_TOOLS_CACHE   where the pinned tools are built (default ~/.cache/docket-tools)
#   DOCKET_TEST_SKIP     steps to skip, same as --skip (space- or comma-separated)
#   DOCKET_SKIP_S3=1     skip the tests against versitygw (and building it before the tests)
#   DOCKET_SKIP_AZURE=1  skip the tests against Azurite (and installing it before the tests)
#   DOCKET_REQUIRE_BROWSER  1 (the default here) makes the dashboard's browser tests fail, not
#                        skip, when Chromium or Firefox is missing; 0 lets them skip
#   DOCKET_CHROMIUM      the Chromium binary the browser test starts (default: chromium on PATH)
#   DOCKET_FIREFOX       the Firefox binary the Firefox tests start (default: firefox-esr, else
#                        firefox, on PATH)
#   DOCKET_REQUIRE_FAKETIME  1 (the default here) makes the chaos clock-skew test fail, not
#                        skip, when libfaketime is missing; 0 lets it skip
#   DOCKET_REQUIRE_TESSERACT  1 (the default here) makes the OCR tests fail, not skip, when
#                        tesseract or its English data is missing; 0 lets them skip
#
# It never runs `go mod tidy`, never commits, and changes the system only to install what is
# missing (with apt-get as root, or through passwordless sudo).
set -euo pipefail

PG_MAJOR=15
ALL_STEPS="setup tools vet lint test nested"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN_DIR=$ROOT/bin

# --- output and timing --------------------------------------------------------------------

log() { printf '%s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() {
	printf 'error: %s\n' "$*" >&2
	exit 1
}

now_ms() {
	if [ -n "${EPOCHREALTIME:-}" ]; then
		local t=${EPOCHREALTIME/[.,]/}
		echo $((10#$t / 1000))
	else
		echo $((SECONDS * 1000))
	fi
}

fmt_ms() { printf '%d.%01ds' $(($1 / 1000)) $((($1 % 1000) / 100)); }

START_MS=$(now_ms)
CURRENT_STEP=""
STEP_START_MS=0
TIMINGS=()

# step NAME COMMAND...: runs COMMAND as one timed step. With set -e a failure ends the
# script; the EXIT trap names the failed step and prints the timings so far.
step() {
	CURRENT_STEP=$1
	shift
	STEP_START_MS=$(now_ms)
	log ""
	log "==> $CURRENT_STEP"
	"$@"
	local took=$(($(now_ms) - STEP_START_MS))
	TIMINGS+=("$(printf '  ok    %-8s %s' "$(fmt_ms "$took")" "$CURRENT_STEP")")
	log "--> ok $CURRENT_STEP ($(fmt_ms "$took"))"
	CURRENT_STEP=""
}

on_exit() {
	local rc=$?
	if [ -n "$CURRENT_STEP" ]; then
		local took=$(($(now_ms) - STEP_START_MS))
		TIMINGS+=("$(printf '  FAIL  %-8s %s' "$(fmt_ms "$took")" "$CURRENT_STEP")")
	fi
	if [ ${#TIMINGS[@]} -gt 0 ]; then
		log ""
		log "Timings:"
		printf '%s\n' "${TIMINGS[@]}"
	fi
	local total
	total=$(fmt_ms $(($(now_ms) - START_MS)))
	if [ "$rc" -eq 0 ]; then
		log "PASS (total $total)"
	else
		log "FAIL${CURRENT_STEP:+ in step: $CURRENT_STEP} (exit $rc, total $total)" >&2
	fi
}
trap on_exit EXIT

# --- arguments ------------------------------------------------------------------------------

SKIP=" $(printf '%s' "${DOCKET_TEST_SKIP:-}" | tr ',' ' ') "
ONLY=" "
SHORT=""
PKGS=()

add_steps() { # add_steps VAR LIST: appends the comma-separated LIST to VAR, checking names
	local var=$1 s
	for s in ${2//,/ }; do
		case " $ALL_STEPS " in
		*" $s "*) ;;
		*) die "unknown step '$s' (steps: $ALL_STEPS)" ;;
		esac
		printf -v "$var" '%s%s ' "${!var}" "$s"
	done
}

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p;}' "${BASH_SOURCE[0]}"; }

while [ $# -gt 0 ]; do
	case $1 in
	--skip | --only)
		[ $# -ge 2 ] || die "$1 needs a step name"
		if [ "$1" = --skip ]; then add_steps SKIP "$2"; else add_steps ONLY "$2"; fi
		shift
		;;
	--skip=*) add_steps SKIP "${1#*=}" ;;
	--only=*) add_steps ONLY "${1#*=}" ;;
	--short) SHORT=-short ;;
	-h | --help) usage && trap - EXIT && exit 0 ;;
	--) shift && PKGS+=("$@") && break ;;
	-*) die "unknown flag $1 (see --help)" ;;
	*) PKGS+=("$1") ;;
	esac
	shift
done
# The repository is a Go workspace (go.work): the service's module at the root, the engine's in
# queue/, each engine driver's (queue/postgres/, queue/sqlite/) and the engine's tests against
# both drivers (queue/enginetest/). A pattern such as ./queue/... stops at a nested module, so
# ALL_PKGS names each module's tree.
WORK_MODULES=(. queue queue/enginetest queue/postgres queue/sqlite) # go.work's use list
ALL_PKGS=(./... ./queue/... ./queue/enginetest/... ./queue/postgres/... ./queue/sqlite/...)
[ ${#PKGS[@]} -gt 0 ] || PKGS=("${ALL_PKGS[@]}")

wanted() { # wanted STEP: whether STEP runs
	case $SKIP in *" $1 "*) return 1 ;; esac
	[ "$ONLY" = " " ] && return 0
	case $ONLY in *" $1 "*) return 0 ;; esac
	return 1
}

# --- installing system packages -------------------------------------------------------------

# as_root COMMAND...: runs COMMAND as root (directly, or through passwordless sudo).
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		sudo -n "$@"
	else
		die "need root to run: $* (run as root, or install it yourself)"
	fi
}

APT_UPDATED=""
apt_install() { # apt_install PACKAGE...: non-interactive install from the configured apt sources
	command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install these yourself: $*"
	if [ -z "$APT_UPDATED" ] && ! apt-cache show "$@" >/dev/null 2>&1; then
		log "apt-get update"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
		APT_UPDATED=1
	fi
	log "apt-get install $*"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# --- step: setup ------------------------------------------------------------------------------

pg_bindir() { # prints the directory holding initdb, pg_ctl and postgres, or fails
	local d
	if d=$(command -v initdb 2>/dev/null); then
		d=$(dirname "$(readlink -f "$d")")
		if [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then
			echo "$d"
			return 0
		fi
	fi
	d=/usr/lib/postgresql/$PG_MAJOR/bin
	if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then
		echo "$d"
		return 0
	fi
	return 1
}

setup_postgres() {
	local bindir
	if ! bindir=$(pg_bindir); then
		log "PostgreSQL $PG_MAJOR server binaries not found; installing postgresql-$PG_MAJOR"
		apt_install "postgresql-$PG_MAJOR"
		bindir=$(pg_bindir) || die "postgresql-$PG_MAJOR installed but initdb not found"
	fi
	export PATH="$bindir:$PATH" # queue/postgres/pgtest looks on PATH first
	local version
	version=$("$bindir/initdb" --version)
	log "initdb: $bindir/initdb ($version)"
	case $version in
	*" $PG_MAJOR."*) ;;
	*) warn "expected PostgreSQL $PG_MAJOR, found: $version" ;;
	esac

	if [ "$(id -u)" -eq 0 ]; then
		# initdb refuses to run as root; queue/postgres/pgtest runs it as postgres via runuser.
		command -v runuser >/dev/null 2>&1 || die "runuser not found (util-linux)"
		if ! id -u postgres >/dev/null 2>&1; then
			log "creating system user postgres"
			useradd --system --user-group --no-create-home --home-dir /var/lib/postgresql \
				--shell /usr/sbin/nologin postgres
		fi
		local tmp=${TMPDIR:-/tmp}
		runuser -u postgres -- test -w "$tmp" -a -x "$tmp" ||
			die "user postgres cannot write to TMPDIR=$tmp (the test clusters live there)"
		log "running as root: test clusters run as user postgres"
	fi
}

setup_cc() { # go test -race needs cgo and a C compiler
	local cc
	cc=$(go env CC)
	cc=${cc%% *}
	if ! command -v "${cc:-gcc}" >/dev/null 2>&1; then
		log "C compiler '${cc:-gcc}' not found (go test -race needs cgo); installing gcc"
		apt_install gcc libc6-dev
	fi
	log "C compiler: $(command -v "${cc:-gcc}")"
}

chromium_bin() { # prints the Chromium the browser test will start, or fails
	local c
	for c in ${DOCKET_CHROMIUM:-} chromium chromium-browser; do
		if command -v "$c" >/dev/null 2>&1; then
			command -v "$c"
			return 0
		fi
	done
	return 1
}

setup_chromium() { # the dashboard's end-to-end test drives a real headless Chromium
	local bin
	if ! bin=$(chromium_bin); then
		log "Chromium not found; installing chromium (for the dashboard's browser test)"
		apt_install chromium
		bin=$(chromium_bin) || die "chromium installed but not found on PATH"
	fi
	log "chromium: $bin ($("$bin" --version 2>/dev/null | head -n 1))"
}

faketime_lib() { # prints the libfaketime the clock-skew test preloads into PostgreSQL, or fails
	local f
	for f in /usr/lib/*/faketime/libfaketime.so.1; do
		[ -e "$f" ] && echo "$f" && return 0
	done
	return 1
}

setup_faketime() { # chaos/skew_test.go runs the PostgreSQL server under libfaketime
	local lib
	if ! lib=$(faketime_lib); then
		log "libfaketime not found; installing libfaketime (for the chaos clock-skew test)"
		apt_install libfaketime
		lib=$(faketime_lib) || die "libfaketime installed but not found under /usr/lib/*/faketime"
	fi
	log "libfaketime: $lib"
}

firefox_bin() { # prints the Firefox the Firefox tests will start, or fails
	local f
	for f in ${DOCKET_FIREFOX:-} firefox-esr firefox; do
		if command -v "$f" >/dev/null 2>&1; then
			command -v "$f"
			return 0
		fi
	done
	return 1
}

setup_firefox() { # the dashboard's Firefox tests drive a real headless Firefox over WebDriver BiDi
	local bin
	if ! bin=$(firefox_bin); then
		log "Firefox not found; installing firefox-esr (for the dashboard's Firefox tests)"
		apt_install firefox-esr
		bin=$(firefox_bin) || die "firefox-esr installed but not found on PATH"
	fi
	log "firefox: $bin ($("$bin" --version 2>/dev/null | head -n 1))"
}

setup_tesseract() { # pipeline/extract reads scanned pages back with a real Tesseract
	if ! command -v tesseract >/dev/null 2>&1 || ! tesseract --list-langs 2>/dev/null | grep -qx eng; then
		log "tesseract with English not found; installing tesseract-ocr and tesseract-ocr-eng (for the OCR tests)"
		apt_install tesseract-ocr tesseract-ocr-eng
		command -v tesseract >/dev/null 2>&1 || die "tesseract-ocr installed but tesseract not found on PATH"
	fi
	log "tesseract: $(command -v tesseract) ($(tesseract --version 2>&1 | head -n 1))"
}

setup_node() { # Azurite, the Azure Blob Storage emulator of the blob tests, is an npm package
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		log "node or npm not found; installing nodejs and npm (for Azurite)"
		apt_install nodejs npm
	fi
	log "node: $(command -v node) ($(node --version)), npm $(npm --version)"
}

setup_python3() { # HTTP dispatch's example endpoint (examples/dispatch) runs in a Go test
	command -v python3 >/dev/null 2>&1 || { log "python3 not found; installing python3"; apt_install python3; }
	log "python3: $(python3 --version 2>&1)"
}

setup() {
	command -v go >/dev/null 2>&1 || die "go not found on PATH (install Go 1.26 or later)"
	log "$(go version)"
	setup_postgres
	setup_cc
	setup_chromium
	setup_faketime
	setup_firefox
	setup_tesseract
	setup_node
	setup_python3
}

# --- step: tools ------------------------------------------------------------------------------
#
# The pinned tools are built from source (the Go module proxy serves no binaries, and neither
# Debian nor npm packages these versions) once per machine, into a cache outside the checkout
# keyed by version and Go version: a fresh clone on a machine that built them once links them
# into ./bin at once. On a machine that never did, both builds start in the background before
# the setup step (which is mostly apt-get, waiting on I/O) and the steps that need them wait.

TOOLS_CACHE=${DOCKET_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/docket-tools}
TOOLS_LOG_DIR=$ROOT/.tmp/tools
GO_MINOR=$(go env GOVERSION 2>/dev/null | sed -n 's/^go\([0-9]*\.[0-9]*\).*/\1/p' || true) # setup says when go is missing

GOLANGCI_LINT_VERSION=v2.15.0
GOLANGCI_LINT_PKG=github.com/golangci/golangci-lint/v2/cmd/golangci-lint
GOLANGCI_LINT_MOD=github.com/golangci/golangci-lint/v2
GOLANGCI_LINT=$BIN_DIR/golangci-lint

VERSITYGW_VERSION=v1.8.0 # the S3-compatible server the blob tests start (blob/blobtest)
VERSITYGW_PKG=github.com/versity/versitygw/cmd/versitygw
VERSITYGW_MOD=github.com/versity/versitygw
VERSITYGW=$BIN_DIR/versitygw

# The Azure Blob Storage emulator the blob tests start (blob/blobtest): the last release that
# runs on node 18 and 20 (3.36 requires node 21, 3.37 node 22).
AZURITE_VERSION=3.35.0
AZURITE=$BIN_DIR/azurite-blob
AZURITE_DIR=$TOOLS_CACHE/azurite-$AZURITE_VERSION

# tool_cached NAME VERSION: the cached binary's path (built by this Go's minor version: a
# golangci-lint built by an older Go refuses to lint code for a newer one).
tool_cached() { echo "$TOOLS_CACHE/$1-$2-go$GO_MINOR/$1"; }

# tool_ok BIN MODULE VERSION: whether BIN is MODULE at VERSION.
tool_ok() {
	[ -x "$1" ] || return 1
	go version -m "$1" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+$2[[:space:]]+$3([[:space:]]|\$)"
}

declare -A TOOL_PID=()

# tool_start NAME PKG MODULE VERSION: unless the cache has it, builds the tool into the cache in
# the background (log in .tmp/tools/NAME.log); tool_link waits for it.
tool_start() {
	local name=$1 pkg=$2 mod=$3 version=$4 bin
	bin=$(tool_cached "$name" "$version")
	tool_ok "$bin" "$mod" "$version" && return 0
	mkdir -p "$TOOLS_LOG_DIR" "$(dirname "$bin")"
	log "building $name $version into $(dirname "$bin") in the background (log: .tmp/tools/$name.log)"
	(
		rm -f "$bin" # go install will not overwrite a file it did not build
		CGO_ENABLED=0 GOBIN=$(dirname "$bin") go install "$pkg@$version"
	) >"$TOOLS_LOG_DIR/$name.log" 2>&1 &
	TOOL_PID[$name]=$!
}

# tool_link NAME MODULE VERSION DEST: waits for the tool's build, if one runs, and links the
# cached binary to DEST.
tool_link() {
	local name=$1 mod=$2 version=$3 dest=$4 bin
	bin=$(tool_cached "$name" "$version")
	if [ -n "${TOOL_PID[$name]:-}" ]; then
		if ! wait "${TOOL_PID[$name]}"; then
			cat "$TOOLS_LOG_DIR/$name.log" >&2
			die "building $name $version failed"
		fi
		unset "TOOL_PID[$name]"
	fi
	tool_ok "$bin" "$mod" "$version" || die "$bin is not $name $version"
	mkdir -p "$BIN_DIR"
	ln -sf "$bin" "$dest"
	log "$name $version: $dest -> $bin"
}

# azurite_ok: whether the cache holds azurite-blob of AZURITE_VERSION.
azurite_ok() {
	[ -x "$AZURITE_DIR/node_modules/.bin/azurite-blob" ] &&
		grep -Eq "\"version\": *\"$AZURITE_VERSION\"" "$AZURITE_DIR/node_modules/azurite/package.json" 2>/dev/null
}

# azurite_install: installs the azurite npm package, exactly AZURITE_VERSION and its runtime
# dependencies, into the cache (npm has no build step to run for it).
azurite_install() {
	rm -rf "$AZURITE_DIR" && mkdir -p "$AZURITE_DIR" &&
		npm install --prefix "$AZURITE_DIR" --no-save --no-audit --no-fund --omit=dev "azurite@$AZURITE_VERSION"
}

# azurite_start: unless the cache has it (or npm is missing: setup installs it, and
# tools_azurite installs Azurite then), installs Azurite in the background.
azurite_start() {
	azurite_ok && return 0
	command -v npm >/dev/null 2>&1 || return 0
	mkdir -p "$TOOLS_LOG_DIR"
	log "installing azurite $AZURITE_VERSION into $AZURITE_DIR in the background (log: .tmp/tools/azurite.log)"
	azurite_install >"$TOOLS_LOG_DIR/azurite.log" 2>&1 &
	TOOL_PID[azurite]=$!
}

tools_azurite() {
	if [ -n "${TOOL_PID[azurite]:-}" ]; then
		wait "${TOOL_PID[azurite]}" || { cat "$TOOLS_LOG_DIR/azurite.log" >&2; die "installing azurite $AZURITE_VERSION failed"; }
		unset "TOOL_PID[azurite]"
	elif ! azurite_ok; then
		command -v npm >/dev/null 2>&1 || die "npm not found (the setup step installs it)"
		log "installing azurite $AZURITE_VERSION into $AZURITE_DIR"
		azurite_install || die "installing azurite $AZURITE_VERSION failed"
	fi
	azurite_ok || die "$AZURITE_DIR holds no azurite $AZURITE_VERSION"
	mkdir -p "$BIN_DIR"
	ln -sf "$AZURITE_DIR/node_modules/.bin/azurite-blob" "$AZURITE"
	log "azurite $AZURITE_VERSION: $AZURITE -> $AZURITE_DIR/node_modules/.bin/azurite-blob"
}

tools_start() {
	if wanted tools || wanted lint; then
		tool_start golangci-lint "$GOLANGCI_LINT_PKG" "$GOLANGCI_LINT_MOD" "$GOLANGCI_LINT_VERSION"
	fi
	if wanted tools || { wanted test && [ "${DOCKET_SKIP_S3:-}" != 1 ]; }; then
		tool_start versitygw "$VERSITYGW_PKG" "$VERSITYGW_MOD" "$VERSITYGW_VERSION"
	fi
	if wanted tools || { wanted test && [ "${DOCKET_SKIP_AZURE:-}" != 1 ]; }; then
		azurite_start
	fi
}

tools_golangci_lint() {
	tool_link golangci-lint "$GOLANGCI_LINT_MOD" "$GOLANGCI_LINT_VERSION" "$GOLANGCI_LINT"
	"$GOLANGCI_LINT" version
}

tools_versitygw() { tool_link versitygw "$VERSITYGW_MOD" "$VERSITYGW_VERSION" "$VERSITYGW"; }

# --- steps: vet, lint, test, nested -----------------------------------------------------------

go_vet() {
	local dir
	for dir in "${WORK_MODULES[@]}"; do
		(cd "$ROOT/$dir" && GOWORK=off go mod tidy -diff) || die "go.mod or go.sum in $dir is untidy (run go mod tidy there)"
	done
	go vet "${PKGS[@]}"
}

# --allow-serial-runners: another golangci-lint on this machine (an editor, a second checkout)
# makes this one wait for it instead of failing with "parallel golangci-lint is running".
golangci_lint_run() { "$GOLANGCI_LINT" run --allow-serial-runners --config "$ROOT/.golangci.yml" "$@"; }

# Tests that skip themselves under -race (internal/race) and run in a pass without it, as
# "-run regexp packages...": the peak-RSS measurements of the bomb tests (the detector's shadow
# memory is what they would measure) and the allocation counts of the analysis of hostile text.
NORACE_RUN='^(TestExtract_BombRSS|TestProcessor_BombRSS|TestAnalyze_hostileAllocs)$'
NORACE_PKGS=(./pipeline/ ./pipeline/extract/ ./pipeline/analyze/)

# Under -race, SQLite's engine (modernc.org/sqlite/lib, its C translated to Go) is left
# uninstrumented, and the pointer checks that -race turns on (checkptr) are off in every
# modernc.org package: with both, SQLite ran some 30 times slower (two thirds of that in
# checkptr) and the SQLite-backed tests took most of the suite's CPU time (the queue package's
# tests: 161 CPU-s with them, 92 without). Every package of ours, the standard library and
# modernc.org/libc stay instrumented. Only that one package: it instantiates no generic code,
# which the linker would share with instrumented packages (instrumenting all of modernc.org
# off made encoding/json's type cache report a race that is not there).
RACE_GCFLAGS=(-gcflags='modernc.org/...=-d=checkptr=0' -gcflags='modernc.org/sqlite/lib=-race=false -d=checkptr=0')

TESTREPORT=$BIN_DIR/testreport
TEST_JSON_DIR=$ROOT/.tmp/test

# report NAME: reads go test -json on stdin, prints a line per package and every failed
# test's output, keeps the stream in .tmp/test/NAME.json and fails on a failed test or a
# package over its budget (scripts/test-budgets.txt).
report() {
	local verbose=()
	case " ${GOTESTFLAGS:-} " in *" -v "* | *" -test.v "* | *" -v=true "*) verbose=(-v) ;; esac
	"$TESTREPORT" -budgets "$ROOT/scripts/test-budgets.txt" -json "$TEST_JSON_DIR/$1.json" ${verbose[@]+"${verbose[@]}"}
}

go_test() {
	# The browser tests fail rather than skip when Chromium or Firefox is missing (setup installs them).
	export DOCKET_REQUIRE_BROWSER=${DOCKET_REQUIRE_BROWSER:-1}
	# Likewise the chaos clock-skew test and libfaketime.
	export DOCKET_REQUIRE_FAKETIME=${DOCKET_REQUIRE_FAKETIME:-1}
	# Likewise the OCR tests and tesseract.
	export DOCKET_REQUIRE_TESSERACT=${DOCKET_REQUIRE_TESSERACT:-1}
	local flags pkgs=("${PKGS[@]}") rc=0
	read -r -a flags <<<"${GOTESTFLAGS:-}"
	go build -o "$TESTREPORT" ./internal/cmd/testreport
	rm -rf "$TEST_JSON_DIR" && mkdir -p "$TEST_JSON_DIR"
	# One docket binary without -race for the tests that run it as a process: the document
	# sandbox's children (pipeline/sandbox's own tests still run their race-built selves) and
	# cmd/docket's serve processes. A child parsing under the race detector cost the bomb
	# table a minute of CPU.
	go build -o "$TEST_JSON_DIR/docket" ./cmd/docket
	export DOCKET_SANDBOX_PATH="$TEST_JSON_DIR/docket" DOCKET_TEST_BINARY="$TEST_JSON_DIR/docket"
	# Sandbox children at nice 10, not serve's 19: the suite keeps both cores busy, and children
	# at the lowest priority barely ran (pipeline/sandbox took 115 s instead of 35).
	export DOCKET_SANDBOX_NICE=${DOCKET_SANDBOX_NICE:-10}
	# The longest packages first: go test starts packages in the order named (and names each
	# once), so that the short ones fill the end of the run rather than a long one running
	# alone there.
	[ "${PKGS[*]}" = "${ALL_PKGS[*]}" ] && pkgs=(./chaos/ ./cmd/docket/ ./queue/postgres/ ./queue/enginetest/ ./web/
		./store/pgstore/ ./pipeline/extract/ ./pipeline/sandbox/ ./pipeline/ ./httpapi/ ./blob/ "${ALL_PKGS[@]}")
	# -p 2 -parallel 4: two packages at once, up to four tests of each. -p 3 ran about 20 %
	# faster but broke the engine's one-second lease bounds (TestWorker_HeartbeatHostClockJumps,
	# twice in two runs), and -p 4 -parallel 8 more.
	CGO_ENABLED=1 go test -race "${RACE_GCFLAGS[@]}" -json -count=1 -p "${DOCKET_TEST_P:-2}" -parallel "${DOCKET_TEST_PARALLEL:-4}" \
		-timeout "${DOCKET_TEST_TIMEOUT:-10m}" ${SHORT:+"$SHORT"} ${flags[@]+"${flags[@]}"} "${pkgs[@]}" 2>&1 |
		report race || rc=$?
	if [ -z "${SHORT:-}" ] && [ -z "${GOTESTFLAGS:-}" ] && [ "${PKGS[*]}" = "${ALL_PKGS[*]}" ]; then
		log "" "tests without -race: $NORACE_RUN"
		go test -json -count=1 -timeout "${DOCKET_TEST_TIMEOUT:-10m}" -run "$NORACE_RUN" "${NORACE_PKGS[@]}" 2>&1 |
			report norace || rc=$?
	fi
	log ""
	"$TESTREPORT" -summary "$TEST_JSON_DIR"/*.json || true
	return "$rc"
}

nested_modules() { # prints the directories of nested Go modules outside the workspace, relative to the root
	find . \( -name .git -o -name bin -o -name .tmp -o -name testdata -o -name vendor \
		-o -name node_modules -o -name docket-data \) -prune -o \
		-name go.mod -type f -print | sed 's|/go.mod$||; s|^\./||' | sort |
		grep -vxF -f <(printf '%s\n' "${WORK_MODULES[@]}") || true
}

check_module() { # check_module DIR: vet, build and (unless skipped) lint one nested module
	local dir=$1
	(
		cd "$ROOT/$dir"
		export GOWORK=off # a module of its own, outside the repository's workspace (go.work)
		log "go vet ./... (in $dir)"
		go vet ./...
		log "go build -o /dev/null ./... (in $dir)"
		go build -o /dev/null ./... # a single main package would write its binary here
		if wanted lint; then
			log "golangci-lint run ./... (in $dir)"
			golangci_lint_run ./...
		fi
	)
}

# --- main -------------------------------------------------------------------------------------

cd "$ROOT"
log "Docket tests in $ROOT (steps:$(for s in $ALL_STEPS; do wanted "$s" && printf ' %s' "$s"; done))"

tools_start
wanted setup && step "setup: PostgreSQL $PG_MAJOR, C compiler, postgres user, Chromium, libfaketime, Firefox, Tesseract" setup
if wanted tools || wanted lint; then
	step "tools: golangci-lint $GOLANGCI_LINT_VERSION" tools_golangci_lint
fi
if wanted tools || { wanted test && [ "${DOCKET_SKIP_S3:-}" != 1 ]; }; then # versitygw
	step "tools: versitygw $VERSITYGW_VERSION" tools_versitygw
fi
if wanted tools || { wanted test && [ "${DOCKET_SKIP_AZURE:-}" != 1 ]; }; then # azurite
	step "tools: azurite $AZURITE_VERSION" tools_azurite
fi
wanted vet && step "go mod tidy -diff, go vet ${PKGS[*]}" go_vet
wanted lint && step "golangci-lint run ${PKGS[*]}" golangci_lint_run "${PKGS[@]}"
wanted test && step "go test -race ${PKGS[*]}" go_test
if wanted nested && [ "${PKGS[*]}" = "${ALL_PKGS[*]}" ]; then
	for dir in $(nested_modules); do
		step "nested module $dir: vet, build$(wanted lint && printf ', lint')" check_module "$dir"
	done
fi
exit 0
