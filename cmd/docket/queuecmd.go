package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue/driver"
)

const queueUsage = `usage: docket queue <health|pause|resume> [flags]

  health   [--queue Q] [--limit N] [--json]  the monitoring views: jobs per queue and state,
           performance per hour over 24 h, stuck and failed jobs, backlog per tenant
           (docs/monitoring.md); while an embedded serve runs, through its admin API
  pause    QUEUE [--json]  no new job of the queue starts, in any worker process, until resumed
  resume   QUEUE [--json]  claiming starts again at once, where it stopped (docs/operations.md)
`

// queueCmd is `docket queue`: its flags.
type queueCmd struct {
	sf      storeFlags
	queue   string
	limit   int
	asJSON  bool
	server  string
	keyFile string
	getenv  func(string) string
	stderr  io.Writer
}

func runQueue(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "pause" || args[0] == "resume") {
		return runPause(ctx, "queue", args, getenv, stdout, stderr) // tenants_pause.go
	}
	if len(args) == 0 || args[0] != "health" {
		fmt.Fprint(stderr, queueUsage)
		return errUsage
	}
	fs := flag.NewFlagSet("queue "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &queueCmd{getenv: getenv, stderr: stderr}
	c.sf.register(fs, getenv)
	e := &envFlags{fs: fs, getenv: getenv}
	e.stringVar(&c.queue, "queue", "DOCKET_QUEUE_NAME", "", "only this queue (default every queue)")
	e.intVar(&c.limit, "limit", "DOCKET_QUEUE_LIMIT", docket.DefaultHealthLimit, "rows of each list (stuck, failed, depth)")
	e.boolVar(&c.asJSON, "json", "DOCKET_QUEUE_JSON", false, "print what GET /v1/admin/health answers")
	e.stringVar(&c.server, "server", "DOCKET_SERVER", "", "a running server's base URL (http://host:port): go through its admin API")
	e.stringVar(&c.keyFile, "admin-key-file", "DOCKET_ADMIN_KEY_FILE", "",
		"the admin key for --server (else DOCKET_ADMIN_KEY, else <data-dir>/admin.key)")
	if err := fs.Parse(args[1:]); err != nil {
		return parseError(err)
	}
	if err := e.err(); err != nil {
		return err
	}
	if c.limit < 1 || c.limit > docket.MaxHealthLimit {
		return fmt.Errorf("--limit %d: want 1 to %d", c.limit, docket.MaxHealthLimit)
	}
	v, err := c.health(ctx)
	if err != nil {
		return err
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(v)
	}
	return printHealth(stdout, v)
}

// health reads the views from --server, else the database, else, when an
// embedded serve holds it, from that serve's admin API.
func (c *queueCmd) health(ctx context.Context) (*httpapi.HealthView, error) {
	return databaseOrServer(ctx, &c.sf, c.server, c.stderr,
		func(d driver.Driver) (*httpapi.HealthView, error) { return c.local(ctx, d) },
		func(base string) (*httpapi.HealthView, error) { return c.remote(ctx, base) })
}

// local reads the views from the database.
func (c *queueCmd) local(ctx context.Context, d driver.Driver) (*httpapi.HealthView, error) {
	store, ok := documents(d)
	if !ok {
		return nil, errors.New("the store has no monitoring views")
	}
	h, err := store.HealthGet(ctx, &docket.HealthParams{Queue: c.queue, Limit: c.limit})
	if err != nil {
		return nil, err
	}
	v := httpapi.NewHealthView(c.queue, h)
	p, err := pausesOf(ctx, d)
	if err != nil {
		return nil, err
	}
	httpapi.MarkPaused(&v, p)
	return &v, nil
}

func (c *queueCmd) remote(ctx context.Context, base string) (*httpapi.HealthView, error) {
	key, err := adminKeyFor(c.keyFile, c.sf.dataDir, c.getenv)
	if err != nil {
		return nil, err
	}
	q := url.Values{"limit": {strconv.Itoa(c.limit)}}
	if c.queue != "" {
		q.Set("queue", c.queue)
	}
	var v httpapi.HealthView
	if err := newAdminClient(base, key).do(ctx, "GET", "/v1/admin/health?"+q.Encode(), nil, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// printHealth prints the views as tables.
func printHealth(w io.Writer, v *httpapi.HealthView) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(v.PausedQueues) > 0 {
		fmt.Fprintf(tw, "PAUSED QUEUES: %s\n\n", strings.Join(v.PausedQueues, " "))
	}
	fmt.Fprintln(tw, "QUEUE\tSTATE\tJOBS\tAVG AGE\tMAX AGE")
	for _, r := range v.QueueHealth {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", r.Queue+pausedMark(r.Paused), r.State, r.Jobs, secs(r.AvgAgeSeconds), secs(r.MaxAgeSeconds))
	}
	fmt.Fprintln(tw, "\nHOUR (UTC)\tQUEUE\tCOMPLETED\tFAILED\tAVG\tP95\tMAX ATTEMPTS")
	for _, r := range v.ProcessingPerformance {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%d\n", r.Hour.Format("2006-01-02 15:04"), r.Queue, r.Completed, r.Failed,
			secsPtr(r.AvgDurationSeconds), secsPtr(r.P95DurationSeconds), r.MaxAttempts)
	}
	fmt.Fprintf(tw, "\nSTUCK JOBS: %d\tQUEUE\tKIND\tTENANT\tATTEMPT\tRUNNING\tREASON\n", v.StuckJobs.Total)
	for _, r := range v.StuckJobs.Jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\n", r.ID, r.Queue, r.Kind, r.TenantID, r.Attempt, r.MaxAttempts, secs(r.RunningSeconds), r.Reason)
	}
	fmt.Fprintf(tw, "\nFAILED JOBS: %d\tQUEUE\tKIND\tTENANT\tATTEMPT\tFAILED AT\tERROR\n", v.FailedJobs.Total)
	for _, r := range v.FailedJobs.Jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%.60s\n", r.ID, r.Queue, r.Kind, r.TenantID, r.Attempt, r.MaxAttempts,
			r.CompletedAt.Format(time.RFC3339), r.ErrorMessage)
	}
	fmt.Fprintf(tw, "\nBACKLOG: %d\tQUEUE\tTENANT\tPENDING\tRUNNING\tOLDEST PENDING\n", v.QueueDepth.Total)
	for _, r := range v.QueueDepth.Tenants {
		fmt.Fprintf(tw, "\t%s\t%s\t%d\t%d\t%s\n", r.Queue, r.TenantID+pausedMark(r.Paused), r.Pending, r.Running, secs(r.OldestPendingAgeSeconds))
	}
	return tw.Flush()
}

// pausedMark follows a paused queue's or tenant's name in the tables.
func pausedMark(paused bool) string {
	if paused {
		return " (paused)"
	}
	return ""
}

func secs(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

func secsPtr(s *float64) string {
	if s == nil {
		return "-"
	}
	return secs(*s)
}
