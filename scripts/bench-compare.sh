#!/usr/bin/env bash
# scripts/bench-compare.sh: docket bench and River's benchmark (bench/river), side by side, on
# one throwaway, durable PostgreSQL server (`make bench-compare` runs it).
#
# It starts its own cluster (initdb + pg_ctl; fsync, synchronous_commit and full_page_writes
# on; listening on 127.0.0.1 only, Unix socket in a private directory; as root every server
# command runs as the postgres user through runuser), builds both benchmark binaries, runs
# each scenario RUNS times, docket and River interleaved, each run on a fresh database, prints
# the median of every figure and the docket/River ratio, and stops the cluster with its own
# pg_ctl. The raw JSON lines stay in OUT.
#
# Usage: scripts/bench-compare.sh [-h] [--docket-only]
#   --docket-only  run only `docket bench` (RUNS times; default SCENARIOS: all five), on the
#                  same kind of throwaway server, and print its medians
#
# Environment:
#   RUNS=3                              runs of each scenario and system
#   SCENARIOS=drain,steady,latency      scenarios (both systems have these three, and fleet:
#                                       K worker processes on one database, named only;
#                                       SCENARIOS=fleet compares it per K)
#   FLEET=1,2,4,8                       worker process counts fleet runs with
#   FLEET_CPUPROFILE                    a directory every fleet worker process (of both
#                                       systems) writes a CPU profile to
#   JOBS (each scenario's default) DURATION=10s SAMPLES=1000 TENANTS=100
#   DOCKET_ARGS, RIVER_ARGS             extra flags for `docket bench` / riverbench
#   RIVER_DEFAULTS=drain                also run River with its default settings in these
#                                       scenarios (comma-separated)
#   OUT=.tmp/bench-compare              where the JSON lines and the server log go
#   PGPORT                              TCP port (default: a free one from 25432 up)
#   PG_BINDIR                           PostgreSQL server binaries (default: initdb on PATH,
#                                       else /usr/lib/postgresql/*/bin)
#   DOCKET_BIN, RIVERBENCH_BIN          prebuilt benchmark binaries (default: go build them),
#                                       for a machine without Go (docs/benchmarks.md, 16 cores)
set -euo pipefail

RUNS=${RUNS:-3}
SCENARIOS=${SCENARIOS:-}
JOBS=${JOBS:-}
DURATION=${DURATION:-10s}
SAMPLES=${SAMPLES:-1000}
TENANTS=${TENANTS:-100}
FLEET=${FLEET:-1,2,4,8}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${OUT:-$ROOT/.tmp/bench-compare}

die() {
	printf 'error: %s\n' "$*" >&2
	exit 1
}
case ${1:-} in
-h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p;}' "$0" && exit 0 ;;
--docket-only) DOCKET_ONLY=1 ;;
"") DOCKET_ONLY="" ;;
*) die "unknown argument $1 (see --help)" ;;
esac
if [ -z "$SCENARIOS" ]; then
	if [ -n "$DOCKET_ONLY" ]; then SCENARIOS=drain,steady,latency,fairness,scale; else SCENARIOS=drain,steady,latency; fi
fi

pg_bindir() {
	local d
	if d=$(command -v initdb 2>/dev/null); then
		d=$(dirname "$(readlink -f "$d")")
		[ -x "$d/pg_ctl" ] && echo "$d" && return 0
	fi
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && echo "$d" && return 0
	done
	return 1
}

BINDIR=${PG_BINDIR:-$(pg_bindir)} || die "PostgreSQL server binaries not found (make setup installs them)"
PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/docket-bench-pg-XXXXXX")
as_pg() { # runs a server command as the postgres user when root (initdb refuses root)
	if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
if [ "$(id -u)" -eq 0 ]; then
	id -u postgres >/dev/null 2>&1 || die "running as root needs a postgres user (make setup creates it)"
	chown postgres: "$PGDIR"
fi

free_port() {
	local p=${PGPORT:-25432}
	while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
	echo "$p"
}
PORT=$(free_port)

STARTED=""
cleanup() {
	if [ -n "$STARTED" ]; then
		as_pg "$BINDIR/pg_ctl" stop -D "$PGDIR/data" -m fast -w >/dev/null || true
	fi
	mkdir -p "$OUT" && cp "$PGDIR/postgres.log" "$OUT/" 2>/dev/null || true
	rm -rf "$PGDIR"
}
trap cleanup EXIT

echo "==> PostgreSQL $("$BINDIR/postgres" --version | awk '{print $3}') in $PGDIR, 127.0.0.1:$PORT, fsync on"
as_pg "$BINDIR/initdb" -D "$PGDIR/data" -U postgres -A trust -E UTF8 --locale=C --no-instructions >/dev/null
cat >>"$PGDIR/data/postgresql.conf" <<EOF
# bench-compare
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$PGDIR'
max_connections = 200
fsync = on
synchronous_commit = on
full_page_writes = on
EOF
as_pg "$BINDIR/pg_ctl" start -D "$PGDIR/data" -w -l "$PGDIR/postgres.log" >/dev/null
STARTED=1
URL="postgres://postgres@127.0.0.1:$PORT/postgres?sslmode=disable"

mkdir -p "$OUT"
if [ -n "${DOCKET_BIN:-}" ]; then
	cp "$DOCKET_BIN" "$PGDIR/docket"
else
	echo "==> building docket"
	go build -o "$PGDIR/docket" "$ROOT/cmd/docket"
fi
if [ -n "${RIVERBENCH_BIN:-}" ]; then
	cp "$RIVERBENCH_BIN" "$PGDIR/riverbench"
elif [ -z "$DOCKET_ONLY" ]; then
	echo "==> building riverbench"
	(cd "$ROOT/bench/river" && GOWORK=off go build -o "$PGDIR/riverbench" .)
fi
: >"$OUT/docket.jsonl"
: >"$OUT/river.jsonl"
: >"$OUT/river-defaults.jsonl"

common=(--database-url "$URL" --duration "$DURATION" --samples "$SAMPLES" --tenants "$TENANTS" --fleet "$FLEET" --json)
[ -n "$JOBS" ] && common+=(--jobs "$JOBS")
if [ -n "${FLEET_CPUPROFILE:-}" ]; then
	mkdir -p "$FLEET_CPUPROFILE"
	common+=(--fleet-cpuprofile "$(cd "$FLEET_CPUPROFILE" && pwd)")
fi
read -r -a docket_args <<<"${DOCKET_ARGS:-}"
read -r -a river_args <<<"${RIVER_ARGS:-}"
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# bench NAME FILE COMMAND...: runs one benchmark, keeps its JSON line, notes the load.
bench() {
	local name=$1 file=$2
	shift 2
	echo "==> run $run/$RUNS: $s: $name (load before: $(loadavg))"
	"$@" | tee -a "$file"
}

for run in $(seq "$RUNS"); do
	for s in ${SCENARIOS//,/ }; do
		bench docket "$OUT/docket.jsonl" "$PGDIR/docket" bench "${common[@]}" --scenario "$s" ${docket_args[@]+"${docket_args[@]}"}
		[ -n "$DOCKET_ONLY" ] && continue
		bench river "$OUT/river.jsonl" "$PGDIR/riverbench" "${common[@]}" --scenario "$s" ${river_args[@]+"${river_args[@]}"}
		case ",${RIVER_DEFAULTS:-}," in
		*",$s,"*) bench "river --defaults" "$OUT/river-defaults.jsonl" "$PGDIR/riverbench" "${common[@]}" --scenario "$s" --defaults ;;
		esac
	done
done

echo
echo "==> medians of $RUNS runs (load now: $(loadavg); JSON lines in $OUT)"
files=("$OUT/docket.jsonl")
[ -z "$DOCKET_ONLY" ] && files+=("$OUT/river.jsonl")
[ -n "${RIVER_DEFAULTS:-}" ] && [ -z "$DOCKET_ONLY" ] && files+=("$OUT/river-defaults.jsonl")
"$ROOT/scripts/bench-summary.awk" "${files[@]}"
