package pgtest

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/jackc/pgx/v5"
)

// EnvStats names the environment variable that, set to a directory, makes
// every cluster this process starts load pg_stat_statements and, when it
// stops, write the statements that took the server's time to a file in
// that directory (stats-<pid>.txt): a tool for finding where a package's
// server CPU goes, not for tests to read.
const EnvStats = "DOCKET_PGTEST_STATS"

// numberedName matches a quoted name that ends in a number (the tests'
// databases), so that the statements on each are summed as one.
var numberedName = regexp.MustCompile(`"([^"]*?)\d+"`)

// statsSettings returns the settings that record statement statistics.
func statsSettings() map[string]string {
	return map[string]string{
		"shared_preload_libraries":         "'pg_stat_statements'",
		"pg_stat_statements.track":         "all",
		"pg_stat_statements.max":           "10000",
		"pg_stat_statements.track_utility": "on",
		"log_connections":                  "on",
	}
}

// writeStats writes the cluster's statement statistics, summed over
// databases by statement text, to dir. Statistics of dropped databases
// remain in the view, so the file covers the whole run.
func (c *Cluster) writeStats(dir string) error {
	type row struct {
		query       string
		calls, rows int64
		totalMs     float64
	}
	byQuery := map[string]*row{}
	var dbs int64
	err := c.admin(func(ctx context.Context, conn *pgx.Conn) error {
		if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
			return err
		}
		rows, err := conn.Query(ctx, `SELECT query, calls, rows, total_exec_time + total_plan_time FROM pg_stat_statements`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.query, &r.calls, &r.rows, &r.totalMs); err != nil {
				return err
			}
			key := strings.Join(strings.Fields(r.query), " ")
			key = numberedName.ReplaceAllString(key, `"${1}N"`)
			if len(key) > 160 {
				key = key[:160]
			}
			if s, ok := byQuery[key]; ok {
				s.calls += r.calls
				s.rows += r.rows
				s.totalMs += r.totalMs
			} else {
				r.query = key
				byQuery[key] = &r
			}
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("pgtest: read statement statistics: %w", err)
	}
	dbs = c.n.Load()
	logged, _ := os.ReadFile(c.srv.logFile())
	conns := bytes.Count(logged, []byte("connection authorized"))
	all := make([]*row, 0, len(byQuery))
	var total float64
	var calls int64
	for _, r := range byQuery {
		all = append(all, r)
		total += r.totalMs
		calls += r.calls
	}
	slices.SortFunc(all, func(a, b *row) int { return cmp.Compare(b.totalMs, a.totalMs) })
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("stats-%d.txt", os.Getpid())))
	if err != nil {
		return err
	}
	defer f.Close()
	exe, _ := os.Executable()
	fmt.Fprintf(f, "%s: %d databases, %d connections, %d statements, %.1f s in statements, server CPU %s\n",
		filepath.Base(exe), dbs, conns, calls, total/1000, c.srv.cpu())
	tw := tabwriter.NewWriter(f, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "total s\tcalls\tms/call\tstatement")
	for _, r := range all[:min(len(all), 60)] {
		fmt.Fprintf(tw, "%.2f\t%d\t%.3f\t%s\n", r.totalMs/1000, r.calls, r.totalMs/float64(max(r.calls, 1)), r.query)
	}
	return tw.Flush()
}
