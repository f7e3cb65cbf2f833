#!/usr/bin/awk -f
# scripts/bench-summary.awk: medians of benchmark JSON lines, side by side.
#
# Usage: bench-summary.awk DOCKET.jsonl [RIVER.jsonl [RIVER_DEFAULTS.jsonl]]
# Each file holds lines from `docket bench --json` or riverbench --json. For every scenario
# and numeric figure it prints the median over the lines of each file and the ratio of the
# first file's median to each other's (for _ms figures lower is better). Portable awk
# (mawk, gawk, busybox).

BEGIN { for (i = 1; i < ARGC; i++) argidx[ARGV[i]] = i; nfiles = ARGC - 1 }

{ file = argidx[FILENAME] }

{
	line = $0
	if (!match(line, /"scenario":"[^"]*"/)) next
	scen = substr(line, RSTART + 12, RLENGTH - 13)
	sub(/,"settings":.*/, "", line)
	sub(/^\{/, "", line)
	n = split(line, parts, ",")
	for (i = 1; i <= n; i++) {
		if (!match(parts[i], /^"[^"]*":/)) continue
		key = substr(parts[i], 2, RLENGTH - 3)
		val = substr(parts[i], RLENGTH + 1)
		if (key == "scenario" || val !~ /^-?[0-9.eE+-]+$/) continue
		id = scen SUBSEP key
		if (!(id in seen)) { seen[id] = 1; order[++norder] = id }
		c = ++count[file, id]
		vals[file, id, c] = val + 0
	}
}

function median(f, id,    n, i, j, t, a) {
	n = count[f, id]
	if (n == 0) return ""
	for (i = 1; i <= n; i++) a[i] = vals[f, id, i]
	for (i = 2; i <= n; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
		a[j + 1] = t
	}
	if (n % 2) return a[(n + 1) / 2]
	return (a[n / 2] + a[n / 2 + 1]) / 2
}

function fmt(v) {
	if (v == "") return "-"
	if (v >= 100 || v <= -100 || v == int(v)) return sprintf("%.0f", v)
	return sprintf("%.2f", v)
}

END {
	printf "%-10s %-40s %12s", "scenario", "figure", "docket"
	if (nfiles >= 2) printf " %12s %10s", "river", "ratio"
	if (nfiles >= 3) printf " %14s %10s", "river-default", "ratio"
	printf "\n"
	for (k = 1; k <= norder; k++) {
		id = order[k]
		split(id, p, SUBSEP)
		d = median(1, id)
		printf "%-10s %-40s %12s", p[1], p[2], fmt(d)
		if (nfiles >= 2) {
			r = median(2, id)
			ratio = (d != "" && r != "" && r != 0) ? sprintf("%.2f", d / r) : "-"
			printf " %12s %10s", fmt(r), ratio
		}
		if (nfiles >= 3) {
			rd = median(3, id)
			ratio = (d != "" && rd != "" && rd != 0) ? sprintf("%.2f", d / rd) : "-"
			printf " %14s %10s", fmt(rd), ratio
		}
		printf "\n"
	}
}
