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

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/sqlite"
)

const periodicUsage = `usage: docket periodic list [flags]

  list   [--json]  the periodic tasks the workers' elected leader runs, from the
         database: the maintenance sweeps (docket.rescue, docket.schedule,
         docket.clean) and the periodic jobs, each with its schedule, last
         tick, last run and next run (docs/periodic.md)
`

// periodicView is one task as `docket periodic list --json` prints it.
type periodicView struct {
	Name      string     `json:"name"`
	Schedule  string     `json:"schedule"`
	LastTick  *time.Time `json:"last_tick"`
	LastRunAt *time.Time `json:"last_run_at"`
	NextRun   time.Time  `json:"next_run"`
	Runs      int64      `json:"runs"`
	Missed    int64      `json:"missed"`
}

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
	var asJSON bool
	e := &envFlags{fs: fs, getenv: getenv}
	e.boolVar(&asJSON, "json", "DOCKET_PERIODIC_JSON", false, "print a JSON object {\"periodic\": [...]}")
	if err := fs.Parse(args[1:]); err != nil {
		return parseError(err)
	}
	if err := e.err(); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("periodic list: unexpected argument %q", fs.Arg(0))
	}
	d, err := sf.open(ctx)
	if errors.Is(err, sqlite.ErrLocked) && sf.embedded() {
		return fmt.Errorf("serve or a worker is running on %s and holds its database: stop it to read its periodic tasks", sf.dataDir)
	}
	if err != nil {
		return err
	}
	defer d.Close()
	recs, err := d.Executor().PeriodicList(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		views := make([]periodicView, len(recs))
		for i, r := range recs {
			views[i] = newPeriodicView(r)
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"periodic": views})
	}
	return printPeriodic(stdout, recs, time.Now())
}

func newPeriodicView(r *queue.PeriodicRecord) periodicView {
	v := periodicView{Name: r.Name, Schedule: r.Schedule, NextRun: r.NextRun, Runs: r.Runs, Missed: r.Missed}
	if !r.LastTick.IsZero() {
		v.LastTick = &r.LastTick
	}
	if !r.LastRunAt.IsZero() {
		v.LastRunAt = &r.LastRunAt
	}
	return v
}

// printPeriodic prints the tasks as a table, times in UTC with how far
// from now they are.
func printPeriodic(w io.Writer, recs []*queue.PeriodicRecord, now time.Time) error {
	if len(recs) == 0 {
		_, err := fmt.Fprintln(w, "no periodic tasks yet: they are recorded when a worker first leads")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCHEDULE\tLAST RUN\tNEXT RUN\tRUNS\tMISSED")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", r.Name, r.Schedule, when(r.LastRunAt, now), when(r.NextRun, now), r.Runs, r.Missed)
	}
	return tw.Flush()
}

// when is t in UTC to the second with its distance from now: "2026-01-02
// 15:04:05Z (3s ago)", or "-" for the zero time.
func when(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := t.Sub(now).Round(time.Second)
	rel := "in " + d.String()
	if d <= 0 {
		rel = (-d).String() + " ago"
	}
	return fmt.Sprintf("%s (%s)", t.UTC().Format("2006-01-02 15:04:05Z"), rel)
}
