#!/usr/bin/env bash
# scripts/test.sh: Docket's one test command (`make test` runs it; so does CI via .ci/run).
#
# On a fresh Debian machine with Go installed, as root or not, it prepares what the
# tests need, then runs them, stopping at the first failure:
#
#   setup  PostgreSQL 15 server binaries (initdb on PATH, else /usr/lib/postgresql/15/bin,
#          else `apt-get install postgresql-15`); a C compiler for -race; as root, a
#          `postgres` OS user (internal/testpg runs initdb through `runuser -u postgres`);
#          Chromium for the dashboard's browser test (else `apt-get install chromium`);
#          libfaketime for the chaos clock-skew test (else `apt-get install libfaketime`)
#          Firefox for the dashboard's Firefox tests (else `apt-get install firefox-esr`)
#   tools  golangci-lint, pinned, built from source into ./bin (only if missing or stale);
#          versitygw likewise (the S3 server the blob tests start), also before the test step
#   vet    go mod tidy -diff (fails when go.mod or go.sum is untidy), then go vet
#   lint   golangci-lint run (implies tools)
#   test   go test -race -count=1 -p 2 -timeout 30m
#   nested every nested Go module (e.g. bench/river): go vet, go build, golangci-lint;
#          its tests and benchmarks are not run
#
# Usage: scripts/test.sh [--skip STEP]... [--only STEP]... [--short] [-h] [PACKAGES...]
#   --skip STEP  leave out a step (repeatable, or comma-separated: --skip lint,nested)
#   --only STEP  run only these steps (repeatable, or comma-separated)
#   --short      pass -short to go test
#   PACKAGES     packages of the main module for vet, lint and test (default ./...);
#                giving any leaves out the nested step
#
# Environment:
#   GOTESTFLAGS          extra go test flags, e.g. GOTESTFLAGS='-run TestClient -v'
#   DOCKET_TEST_P        go test -p (default 2)
#   DOCKET_TEST_TIMEOUT  go test -timeout (default 30m: sqlitestore's plan test fills
#                        10^6 chunks through SQLite compiled to Go, under -race; 19 min
#                        at load 10-25)
#   DOCKET_TEST_SKIP     steps to skip, same as --skip (space- or comma-separated)
#   DOCKET_SKIP_S3=1     skip the tests against versitygw (and building it before the tests)
#   DOCKET_REQUIRE_BROWSER  1 (the default here) makes the dashboard's browser tests fail, not
#                        skip, when Chromium or Firefox is missing; 0 lets them skip
#   DOCKET_CHROMIUM      the Chromium binary the browser test starts (default: chromium on PATH)
#   DOCKET_FIREFOX       the Firefox binary the Firefox tests start (default: firefox-esr, else
#                        firefox, on PATH)
#   DOCKET_REQUIRE_FAKETIME  1 (the default here) makes the chaos clock-skew test fail, not
#                        skip, when libfaketime is missing; 0 lets it skip
#
# It never runs `go mod tidy`, never commits, and changes the system only to install what is
# missing (with apt-get as root, or through passwordless sudo).
set -euo pipefail

GOLANGCI_LINT_VERSION=v2.15.0
GOLANGCI_LINT_PKG=github.com/golangci/golangci-lint/v2/cmd/golangci-lint
PG_MAJOR=15
ALL_STEPS="setup tools vet lint test nested"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN_DIR=$ROOT/bin
GOLANGCI_LINT=$BIN_DIR/golangci-lint

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
[ ${#PKGS[@]} -gt 0 ] || PKGS=(./...)

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
	export PATH="$bindir:$PATH" # internal/testpg looks on PATH first
	local version
	version=$("$bindir/initdb" --version)
	log "initdb: $bindir/initdb ($version)"
	case $version in
	*" $PG_MAJOR."*) ;;
	*) warn "expected PostgreSQL $PG_MAJOR, found: $version" ;;
	esac

	if [ "$(id -u)" -eq 0 ]; then
		# initdb refuses to run as root; internal/testpg runs it as postgres via runuser.
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
	setup_python3
}

# --- step: tools ------------------------------------------------------------------------------

# golangci_lint_current: whether ./bin/golangci-lint is the pinned version, built by this
# Go (a golangci-lint built by an older Go refuses to lint code for a newer one).
golangci_lint_current() {
	[ -x "$GOLANGCI_LINT" ] || return 1
	local info built_go want_go
	info=$(go version -m "$GOLANGCI_LINT" 2>/dev/null) || return 1
	printf '%s\n' "$info" | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/golangci/golangci-lint/v2[[:space:]]+$GOLANGCI_LINT_VERSION([[:space:]]|$)" || return 1
	built_go=$(printf '%s\n' "$info" | sed -n '1s/^.*: go\([0-9]*\.[0-9]*\).*/\1/p')
	want_go=$(go env GOVERSION | sed -n 's/^go\([0-9]*\.[0-9]*\).*/\1/p')
	[ "$built_go" = "$want_go" ]
}

tools() {
	if golangci_lint_current; then
		log "golangci-lint $GOLANGCI_LINT_VERSION already in $BIN_DIR"
	else
		log "building golangci-lint $GOLANGCI_LINT_VERSION into $BIN_DIR (takes a few minutes the first time)"
		mkdir -p "$BIN_DIR"
		rm -f "$GOLANGCI_LINT" # go install will not overwrite a file it did not build
		GOBIN=$BIN_DIR go install "$GOLANGCI_LINT_PKG@$GOLANGCI_LINT_VERSION"
		golangci_lint_current || die "installed golangci-lint is not $GOLANGCI_LINT_VERSION for $(go env GOVERSION)"
	fi
	"$GOLANGCI_LINT" version
}

# --- versitygw: the S3-compatible server the blob tests start (blob/blobtest/versitygw.go) ---

VERSITYGW_VERSION=v1.8.0
VERSITYGW_PKG=github.com/versity/versitygw/cmd/versitygw
VERSITYGW=$BIN_DIR/versitygw

versitygw_current() { # whether ./bin/versitygw is the pinned version
	[ -x "$VERSITYGW" ] || return 1
	local info
	info=$(go version -m "$VERSITYGW" 2>/dev/null) || return 1
	printf '%s\n' "$info" | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/versity/versitygw[[:space:]]+$VERSITYGW_VERSION([[:space:]]|$)"
}

tools_versitygw() {
	if versitygw_current; then
		log "versitygw $VERSITYGW_VERSION already in $BIN_DIR"
		return 0
	fi
	log "building versitygw $VERSITYGW_VERSION into $BIN_DIR (about 2 minutes the first time)"
	mkdir -p "$BIN_DIR"
	rm -f "$VERSITYGW" # go install will not overwrite a file it did not build
	GOBIN=$BIN_DIR go install "$VERSITYGW_PKG@$VERSITYGW_VERSION"
	versitygw_current || die "installed versitygw is not $VERSITYGW_VERSION"
}

# --- end versitygw ----------------------------------------------------------------------------

# --- steps: vet, lint, test, nested -----------------------------------------------------------

go_vet() { go mod tidy -diff && go vet "${PKGS[@]}"; }

# --allow-serial-runners: another golangci-lint on this machine (an editor, a second checkout)
# makes this one wait for it instead of failing with "parallel golangci-lint is running".
golangci_lint_run() { "$GOLANGCI_LINT" run --allow-serial-runners --config "$ROOT/.golangci.yml" "$@"; }

go_test() {
	# The browser tests fail rather than skip when Chromium or Firefox is missing (setup installs them).
	export DOCKET_REQUIRE_BROWSER=${DOCKET_REQUIRE_BROWSER:-1}
	# Likewise the chaos clock-skew test and libfaketime.
	export DOCKET_REQUIRE_FAKETIME=${DOCKET_REQUIRE_FAKETIME:-1}
	local flags pkgs=("${PKGS[@]}")
	read -r -a flags <<<"${GOTESTFLAGS:-}"
	# The longest packages first: go test starts packages in the order named (and names each
	# once), so the longest (the SQLite document store, ~400 s under -race on 2 cores) no longer starts last and
	# runs alone while the other slot idles.
	[ "${PKGS[*]}" = "./..." ] && pkgs=(./sqlite/sqlitestore/ ./chaos/ ./postgres/pgstore/ ./cmd/docket/ ./sqlite/ ./postgres/ ./queue/ ./...)
	CGO_ENABLED=1 go test -race -count=1 -p "${DOCKET_TEST_P:-2}" \
		-timeout "${DOCKET_TEST_TIMEOUT:-30m}" ${SHORT:+"$SHORT"} ${flags[@]+"${flags[@]}"} "${pkgs[@]}"
	# The bomb tests that measure a parse's peak resident set skip under -race (the detector's
	# shadow memory is what they would measure); they run here without it.
	if [ -z "${SHORT:-}" ] && [ -z "${GOTESTFLAGS:-}" ] && [ "${PKGS[*]}" = "./..." ]; then
		go test -count=1 -timeout "${DOCKET_TEST_TIMEOUT:-30m}" -run 'BombRSS' ./pipeline/ ./pipeline/extract/
	fi
}

nested_modules() { # prints the directories of nested Go modules, relative to the root
	find . \( -name .git -o -name bin -o -name .tmp -o -name testdata -o -name vendor \
		-o -name node_modules -o -name docket-data \) -prune -o \
		-name go.mod -type f ! -path ./go.mod -print | sed 's|^\./||; s|/go.mod$||' | sort
}

check_module() { # check_module DIR: vet, build and (unless skipped) lint one nested module
	local dir=$1
	(
		cd "$ROOT/$dir"
		log "go vet ./... (in $dir)"
		go vet ./...
		log "go build ./... (in $dir)"
		go build ./...
		if wanted lint; then
			log "golangci-lint run ./... (in $dir)"
			golangci_lint_run ./...
		fi
	)
}

# --- main -------------------------------------------------------------------------------------

cd "$ROOT"
log "Docket tests in $ROOT (steps:$(for s in $ALL_STEPS; do wanted "$s" && printf ' %s' "$s"; done))"

wanted setup && step "setup: PostgreSQL $PG_MAJOR, C compiler, postgres user, Chromium, libfaketime, Firefox" setup
if wanted tools || wanted lint; then
	step "tools: golangci-lint $GOLANGCI_LINT_VERSION" tools
fi
if wanted tools || { wanted test && [ "${DOCKET_SKIP_S3:-}" != 1 ]; }; then # versitygw
	step "tools: versitygw $VERSITYGW_VERSION" tools_versitygw
fi
wanted vet && step "go mod tidy -diff, go vet ${PKGS[*]}" go_vet
wanted lint && step "golangci-lint run ${PKGS[*]}" golangci_lint_run "${PKGS[@]}"
wanted test && step "go test -race ${PKGS[*]}" go_test
if wanted nested && [ "${PKGS[*]}" = "./..." ]; then
	for dir in $(nested_modules); do
		step "nested module $dir: vet, build$(wanted lint && printf ', lint')" check_module "$dir"
	done
fi
exit 0
