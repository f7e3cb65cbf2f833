package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

const jobsUsage = `usage: docket jobs <list|show|get|cancel|retry|discard> [flags] [ID]

  list     [--tenant T] [--status pending|processing|completed|failed|cancelled] [--limit N] [--json]
  show     ID [--json]      one job with its attempt history (also through --server, or the
                            admin API of a serve running on the data dir)
  get      ID [--json]      the same as show
  cancel   ID [--json]      cancel a pending or running job
  retry    ID [--json]      a new job for a failed or cancelled one (the original is kept)
  discard  ID [--reason R] [--json]  fail a job that blocks its tenant

They open the database; with --server, or while an embedded serve runs on
the data dir, they go through the admin API (GET /v1/admin/jobs, /{id},
POST /v1/admin/jobs/{id}/cancel, /requeue, /discard).
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
	e.stringVar(&c.server, "server", "DOCKET_SERVER", "", "a running server's base URL (http://host:port): go through its admin API")
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
	_, err = databaseOrServer(ctx, &c.sf, c.server, stderr,
		func(d driver.Driver) (struct{}, error) {
			return struct{}{}, c.runStore(ctx, queue.NewClient(d, queue.ClientConfig{}), sub, id, stdout)
		},
		func(base string) (struct{}, error) { return struct{}{}, c.runRemote(ctx, base, sub, id, stdout) })
	return err
}

// runRemote runs list, cancel, retry or discard through a server's admin
// API: GET /v1/admin/jobs, POST /v1/admin/jobs/{id}/cancel, /requeue and
// /discard.
func (c *jobsCmd) runRemote(ctx context.Context, base, sub string, id int64, stdout io.Writer) error {
	key, err := adminKeyFor(c.keyFile, c.sf.dataDir, c.getenv)
	if err != nil {
		return err
	}
	client := newAdminClient(base, key)
	if sub == "list" {
		if err := checkJobStatus(c.status); err != nil {
			return err
		}
		q := url.Values{"limit": {strconv.Itoa(c.limit)}}
		if c.tenantID != "" {
			q.Set("tenant", c.tenantID)
		}
		if c.status != "" {
			q.Set("status", c.status)
		}
		var out struct {
			Jobs []httpapi.JobView `json:"jobs"`
		}
		if err := client.do(ctx, "GET", "/v1/admin/jobs?"+q.Encode(), nil, &out); err != nil {
			return err
		}
		return printJobs(stdout, out.Jobs, c.asJSON)
	}
	verb, body := sub, any(nil)
	switch sub {
	case "retry":
		verb = "requeue"
	case "discard":
		body = map[string]string{"reason": c.reason}
	}
	var out struct {
		Job httpapi.JobView `json:"job"`
	}
	if err := client.do(ctx, "POST", "/v1/admin/jobs/"+strconv.FormatInt(id, 10)+"/"+verb, body, &out); err != nil {
		return fmt.Errorf("jobs %s %d: %w", sub, id, err)
	}
	return printJob(stdout, out.Job, c.asJSON)
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
	return printJob(stdout, httpapi.NewJobView(job), c.asJSON)
}

// printJob prints the job a command changed.
func printJob(stdout io.Writer, v httpapi.JobView, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"job": v})
	}
	_, err := fmt.Fprintf(stdout, "job %s: %s\n", v.ID, v.Status)
	return err
}

// checkJobStatus refuses a --status that is not a document status.
func checkJobStatus(status string) error {
	if status != "" && !docket.DocumentStatus(status).Valid() {
		return fmt.Errorf("--status %q: want pending, processing, completed, failed or cancelled", status)
	}
	return nil
}

func listJobs(ctx context.Context, c *queue.Client, stdout io.Writer, tenantID, status string, limit int, asJSON bool) error {
	p := &queue.JobListParams{TenantID: tenantID, Limit: limit}
	if err := checkJobStatus(status); err != nil {
		return err
	}
	if status != "" {
		p.States = docket.DocumentStatus(status).JobStates()
	}
	jobs, err := c.List(ctx, p)
	if err != nil {
		return err
	}
	views := make([]httpapi.JobView, len(jobs))
	for i, j := range jobs {
		views[i] = httpapi.NewJobView(j)
		views[i].Stage = j.Stage
	}
	return printJobs(stdout, views, asJSON)
}

// printJobs prints a listing of jobs.
func printJobs(stdout io.Writer, views []httpapi.JobView, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"jobs": views})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTENANT\tKIND\tSTATUS\tSTAGE\tPROGRESS\tATTEMPT\tCREATED\tERROR")
	for _, v := range views {
		msg := ""
		if v.ErrorMessage != nil {
			msg = *v.ErrorMessage
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d%%\t%d/%d\t%s\t%.60s\n", v.ID, v.TenantID, v.Kind,
			v.Status, v.Stage, v.ProgressPercent, v.Attempt, v.MaxAttempts, v.CreatedAt.Format(time.RFC3339), msg)
	}
	return tw.Flush()
}
