package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/sqlite"
)

const jobsUsage = `usage: docket jobs <list|show|get|cancel|retry|discard> [flags] [ID]

  list     [--tenant T] [--status pending|processing|completed|failed|cancelled] [--limit N] [--json]
  show     ID [--json]      one job with its attempt history (also through --server, or the
                            admin API of a serve running on the data dir)
  get      ID [--json]      the same as show
  cancel   ID [--json]      cancel a pending or running job
  retry    ID [--json]      a new job for a failed or cancelled one (the original is kept)
  discard  ID [--reason R] [--json]  fail a job that blocks its tenant
`

// jobsSynopsis is each subcommand's usage line, which -h prints above its
// flags.
var jobsSynopsis = map[string]string{
	"list":    "[--tenant T] [--status S] [--limit N] [flags]",
	"show":    "ID [flags]",
	"get":     "ID [flags]",
	"cancel":  "ID [flags]",
	"retry":   "ID [flags]",
	"discard": "ID [--reason R] [flags]",
}

// jobsCmd is a jobs command's flags.
type jobsCmd struct {
	sf                       storeFlags
	tenantID, status, reason string
	limit                    int
	asJSON                   bool
	server, keyFile          string
	getenv                   func(string) string
}

func runJobs(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, jobsUsage)
		return errUsage
	}
	sub := args[0]
	if _, ok := jobsSynopsis[sub]; !ok {
		fmt.Fprintf(stderr, "docket jobs: unknown subcommand %q\n\n%s", sub, jobsUsage)
		return errUsage
	}
	fs := newSubFlagSet("jobs", sub, jobsSynopsis[sub], stderr)
	c := &jobsCmd{getenv: getenv}
	c.sf.register(fs, getenv)
	e := &envFlags{fs: fs, getenv: getenv}
	e.stringVar(&c.tenantID, "tenant", "DOCKET_JOBS_TENANT", "", "only this tenant's jobs (list)")
	e.stringVar(&c.status, "status", "DOCKET_JOBS_STATUS", "", "only jobs with this status (list)")
	e.intVar(&c.limit, "limit", "DOCKET_JOBS_LIMIT", 50, "most jobs to list")
	e.stringVar(&c.reason, "reason", "DOCKET_JOBS_REASON", "discarded by an operator", "why (discard)")
	e.boolVar(&c.asJSON, "json", "DOCKET_JOBS_JSON", false, "print JSON with the API's field names")
	e.stringVar(&c.server, "server", "DOCKET_SERVER", "", "a running server's base URL (http://host:port): read through its admin API (show)")
	e.stringVar(&c.keyFile, "admin-key-file", "DOCKET_ADMIN_KEY_FILE", "",
		"the admin key for --server (else DOCKET_ADMIN_KEY, else <data-dir>/admin.key)")
	pos, err := parseWithArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if err := e.err(); err != nil {
		return err
	}
	var id int64
	if sub != "list" {
		if len(pos) != 1 {
			fmt.Fprintf(stderr, "docket jobs %s: want a job id\n\n%s", sub, jobsUsage)
			return errUsage
		}
		if id, err = strconv.ParseInt(pos[0], 10, 64); err != nil || id <= 0 {
			fmt.Fprintf(stderr, "docket jobs %s: %q: want a job id (a positive integer)\n\n%s", sub, pos[0], jobsUsage)
			return errUsage
		}
	} else if len(pos) > 0 {
		return fmt.Errorf("jobs list: unexpected argument %q", pos[0])
	}
	if sub == "show" || sub == "get" {
		return c.show(ctx, id, stdout, stderr)
	}
	if c.server != "" {
		return fmt.Errorf("jobs %s: --server: only show reads through the admin API; "+
			"use its routes /v1/admin/jobs/failed, /stuck, /{id}/requeue and /{id}/discard", sub)
	}
	d, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	return c.runStore(ctx, queue.NewClient(d, queue.ClientConfig{}), sub, id, stdout)
}

// open opens the database; while an embedded serve holds it, the error
// says how to reach the same through serve.
func (c *jobsCmd) open(ctx context.Context) (driver.Driver, error) {
	d, err := c.sf.open(ctx)
	if base := readServeURL(c.sf.dataDir); errors.Is(err, sqlite.ErrLocked) && c.sf.embedded() && base != "" {
		return nil, fmt.Errorf("serve is running on %s and holds its database: stop it, or use its admin API, "+
			"%s/v1/admin/jobs/failed, /v1/admin/jobs/stuck, /v1/admin/jobs/{id}/requeue and /discard, "+
			"or the tenant API, /v1/jobs (docket jobs show goes through it)", c.sf.dataDir, base)
	}
	return d, err
}

// runStore runs list, cancel, retry or discard on the database.
func (c *jobsCmd) runStore(ctx context.Context, client *queue.Client, sub string, id int64, stdout io.Writer) error {
	var (
		job *queue.Job
		err error
	)
	switch sub {
	case "list":
		return listJobs(ctx, client, stdout, c.tenantID, c.status, c.limit, c.asJSON)
	case "cancel":
		job, err = client.Cancel(ctx, id, "")
	case "retry":
		job, err = client.Retry(ctx, id, "")
	default:
		job, err = client.Discard(ctx, id, c.reason)
	}
	if err != nil {
		return fmt.Errorf("jobs %s %d: %w", sub, id, err)
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"job": httpapi.NewJobView(job)})
	}
	fmt.Fprintf(stdout, "job %d: %s\n", job.ID, docket.StatusOf(job.State))
	return nil
}

func listJobs(ctx context.Context, c *queue.Client, stdout io.Writer, tenantID, status string, limit int, asJSON bool) error {
	p := &queue.JobListParams{TenantID: tenantID, Limit: limit}
	if status != "" {
		s := docket.DocumentStatus(status)
		if !s.Valid() {
			return fmt.Errorf("--status %q: want pending, processing, completed, failed or cancelled", status)
		}
		p.States = s.JobStates()
	}
	jobs, err := c.List(ctx, p)
	if err != nil {
		return err
	}
	if asJSON {
		views := make([]httpapi.JobView, len(jobs))
		for i, j := range jobs {
			views[i] = httpapi.NewJobView(j)
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"jobs": views})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTENANT\tKIND\tSTATUS\tSTAGE\tPROGRESS\tATTEMPT\tCREATED\tERROR")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d%%\t%d/%d\t%s\t%.60s\n", j.ID, j.TenantID, j.Kind,
			docket.StatusOf(j.State), j.Stage, j.Progress, j.Attempt, j.MaxAttempts, j.CreatedAt.Format(time.RFC3339), j.ErrorMessage)
	}
	return tw.Flush()
}
