package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/sqlite"
)

const jobsUsage = `usage: docket jobs <list|get|cancel|retry|discard> [flags] [ID]

  list     [--tenant T] [--status pending|processing|completed|failed|cancelled] [--limit N] [--json]
  get      ID [--json]      one job with its attempts
  cancel   ID               cancel a pending or running job
  retry    ID               a new job for a failed or cancelled one (the original is kept)
  discard  ID [--reason R]  fail a job that blocks its tenant
`

func runJobs(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, jobsUsage)
		return errUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("jobs "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs, getenv)
	var (
		tenantID, status, reason string
		limit                    int
		asJSON                   bool
	)
	e := &envFlags{fs: fs, getenv: getenv}
	e.stringVar(&tenantID, "tenant", "DOCKET_JOBS_TENANT", "", "only this tenant's jobs (list)")
	e.stringVar(&status, "status", "DOCKET_JOBS_STATUS", "", "only jobs with this status (list)")
	e.intVar(&limit, "limit", "DOCKET_JOBS_LIMIT", 50, "most jobs to list")
	e.stringVar(&reason, "reason", "DOCKET_JOBS_REASON", "discarded by an operator", "why (discard)")
	e.boolVar(&asJSON, "json", "DOCKET_JOBS_JSON", false, "print JSON with the API's field names")
	rest, idArg := args[1:], ""
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") { // the id may come before the flags
		idArg, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return parseError(err)
	}
	if err := e.err(); err != nil {
		return err
	}
	if idArg == "" {
		idArg = fs.Arg(0)
	}
	var id int64
	if sub != "list" {
		var err error
		if id, err = strconv.ParseInt(idArg, 10, 64); err != nil || id <= 0 {
			fmt.Fprintf(stderr, "docket jobs %s: want a job id\n\n%s", sub, jobsUsage)
			return errUsage
		}
	}
	d, err := sf.open(ctx)
	if base := readServeURL(sf.dataDir); errors.Is(err, sqlite.ErrLocked) && sf.embedded() && base != "" {
		return fmt.Errorf("serve is running on %s and holds its database: stop it, or use its admin API, "+
			"%s/v1/admin/jobs/failed, /v1/admin/jobs/stuck, /v1/admin/jobs/{id}/requeue and /discard, "+
			"or the tenant API, /v1/jobs", sf.dataDir, base)
	}
	if err != nil {
		return err
	}
	defer d.Close()
	c := queue.NewClient(d, queue.ClientConfig{})
	var job *queue.Job
	switch sub {
	case "list":
		return listJobs(ctx, c, stdout, tenantID, status, limit, asJSON)
	case "get":
		return showJob(ctx, c, stdout, id, asJSON)
	case "cancel":
		job, err = c.Cancel(ctx, id, "")
	case "retry":
		job, err = c.Retry(ctx, id, "")
	case "discard":
		job, err = c.Discard(ctx, id, reason)
	default:
		fmt.Fprintf(stderr, "docket jobs: unknown subcommand %q\n\n%s", sub, jobsUsage)
		return errUsage
	}
	if err != nil {
		return fmt.Errorf("jobs %s %d: %w", sub, id, err)
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

func showJob(ctx context.Context, c *queue.Client, stdout io.Writer, id int64, asJSON bool) error {
	j, err := c.Get(ctx, id)
	if err != nil {
		return fmt.Errorf("job %d: %w", id, err)
	}
	attempts, err := c.Attempts(ctx, id)
	if err != nil {
		return err
	}
	if asJSON {
		views := make([]attemptView, len(attempts))
		for i, a := range attempts {
			views[i] = attemptView{Attempt: a.Attempt, WorkerID: a.WorkerID, StartedAt: a.StartedAt,
				FinishedAt: a.FinishedAt, Outcome: string(a.Outcome), Error: a.Error}
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"job": httpapi.NewJobView(j), "attempts": views})
	}
	fmt.Fprintf(stdout, "job %d  tenant %s  kind %s  status %s  stage %s  %d%%  attempt %d/%d\n",
		j.ID, j.TenantID, j.Kind, docket.StatusOf(j.State), j.Stage, j.Progress, j.Attempt, j.MaxAttempts)
	if j.ErrorMessage != "" {
		fmt.Fprintf(stdout, "error: %s\n", j.ErrorMessage)
	}
	for _, a := range attempts {
		fmt.Fprintf(stdout, "  attempt %d  %s  worker %s  %s → %s  %s\n", a.Attempt, a.Outcome, a.WorkerID,
			a.StartedAt.Format(time.RFC3339), a.FinishedAt.Format(time.RFC3339), a.Error)
	}
	return nil
}

// attemptView is a finished attempt as `docket jobs get --json` shows it,
// named as the API names things.
type attemptView struct {
	Attempt    int       `json:"attempt"`
	WorkerID   string    `json:"worker_id"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Outcome    string    `json:"outcome"`
	Error      string    `json:"error"`
}
