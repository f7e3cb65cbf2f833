package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/sqlite"
)

const periodicUsage = `usage: docket periodic list [flags]

  list   [--json]  the periodic tasks the workers' elected leader runs, from the
         database: the maintenance sweeps (docket.rescue, docket.schedule,
         docket.clean) and the periodic jobs, each with its schedule, last
         tick, last run and next run (docs/periodic.md)
`

func runPeriodic(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help") {
		fmt.Fprint(stdout, periodicUsage)
		return nil
	}
	if len(args) == 0 || args[0] != "list" {
		fmt.Fprint(stderr, periodicUsage)
		return errUsage
	}
	fs := flag.NewFlagSet("periodic list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, periodicUsage, "\nflags:\n")
		fs.PrintDefaults()
	}
	var sf storeFlags
	sf.register(fs, getenv)
	var (
		asJSON          bool
		server, keyFile string
	)
	e := &envFlags{fs: fs, getenv: getenv}
	e.boolVar(&asJSON, "json", "DOCKET_PERIODIC_JSON", false, "print a JSON object {\"periodic\": [...]}, as GET /v1/admin/periodic answers")
	e.stringVar(&server, "server", "DOCKET_SERVER", "", "a running server's base URL (http://host:port): go through its admin API")
	e.stringVar(&keyFile, "admin-key-file", "DOCKET_ADMIN_KEY_FILE", "",
		"the admin key for --server (else DOCKET_ADMIN_KEY, else <data-dir>/admin.key)")
	if err := fs.Parse(args[1:]); err != nil {
		return parseError(err)
	}
	if err := e.err(); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("periodic list: unexpected argument %q", fs.Arg(0))
	}
	list, err := readPeriodic(ctx, &sf, server, keyFile, getenv, stderr)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(list)
	}
	return printPeriodic(stdout, list.Periodic, time.Now())
}

// readPeriodic reads the records from --server, else the database, else,
// when an embedded serve holds it, from that serve's admin API.
func readPeriodic(ctx context.Context, sf *storeFlags, server, keyFile string, getenv func(string) string, stderr io.Writer) (*httpapi.PeriodicListView, error) {
	remote := func(base string) (*httpapi.PeriodicListView, error) {
		key, err := adminKeyFor(keyFile, sf.dataDir, getenv)
		if err != nil {
			return nil, err
		}
		var v httpapi.PeriodicListView
		if err := newAdminClient(base, key).do(ctx, "GET", "/v1/admin/periodic", nil, &v); err != nil {
			return nil, err
		}
		return &v, nil
	}
	local := func(d driver.Driver) (*httpapi.PeriodicListView, error) {
		recs, err := queue.NewClient(d, queue.ClientConfig{}).Periodic(ctx)
		if err != nil {
			return nil, err
		}
		v := httpapi.NewPeriodicListView(recs)
		return &v, nil
	}
	v, err := databaseOrServer(ctx, sf, server, stderr, local, remote)
	if errors.Is(err, sqlite.ErrLocked) && sf.embedded() {
		return nil, fmt.Errorf("a worker is running on %s and holds its database: stop it, or give --server", sf.dataDir)
	}
	return v, err
}

// printPeriodic prints the tasks as a table, times in UTC with how far
// from now they are.
func printPeriodic(w io.Writer, recs []httpapi.PeriodicView, now time.Time) error {
	if len(recs) == 0 {
		_, err := fmt.Fprintln(w, "no periodic tasks yet: they are recorded when a worker first leads")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCHEDULE\tLAST RUN\tNEXT RUN\tRUNS\tMISSED")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", r.Name, r.Schedule, when(r.LastRunAt, now), when(&r.NextRun, now), r.Runs, r.Missed)
	}
	return tw.Flush()
}

// when is t in UTC to the second with its distance from now: "2026-01-02
// 15:04:05Z (3s ago)", or "-" for none.
func when(tp *time.Time, now time.Time) string {
	if tp == nil || tp.IsZero() {
		return "-"
	}
	t := *tp
	d := t.Sub(now).Round(time.Second)
	rel := "in " + d.String()
	if d <= 0 {
		rel = (-d).String() + " ago"
	}
	return fmt.Sprintf("%s (%s)", t.UTC().Format("2006-01-02 15:04:05Z"), rel)
}
