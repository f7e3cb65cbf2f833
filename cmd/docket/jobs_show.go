package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// show prints a job with its attempt history: as a table, or with --json
// as GET /v1/admin/jobs/{id} answers.
func (c *jobsCmd) show(ctx context.Context, id int64, stdout, stderr io.Writer) error {
	v, err := c.detail(ctx, id, stderr)
	if err != nil {
		return err
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(v)
	}
	return printJobDetail(stdout, v)
}

// detail reads the job from --server, else the database, else, when an
// embedded serve holds it, from that serve's admin API.
func (c *jobsCmd) detail(ctx context.Context, id int64, stderr io.Writer) (*httpapi.JobDetailView, error) {
	return databaseOrServer(ctx, &c.sf, c.server, stderr,
		func(d driver.Driver) (*httpapi.JobDetailView, error) { return localDetail(ctx, d, id) },
		func(base string) (*httpapi.JobDetailView, error) { return c.remoteDetail(ctx, base, id) })
}

// localDetail reads the job from the database.
func localDetail(ctx context.Context, d driver.Driver, id int64) (*httpapi.JobDetailView, error) {
	client := queue.NewClient(d, queue.ClientConfig{})
	j, err := client.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	attempts, err := client.Attempts(ctx, id)
	if err != nil {
		return nil, err
	}
	v := httpapi.NewJobDetailView(j, attempts)
	return &v, nil
}

func (c *jobsCmd) remoteDetail(ctx context.Context, base string, id int64) (*httpapi.JobDetailView, error) {
	key, err := adminKeyFor(c.keyFile, c.sf.dataDir, c.getenv)
	if err != nil {
		return nil, err
	}
	var v httpapi.JobDetailView
	if err := newAdminClient(base, key).do(ctx, "GET", "/v1/admin/jobs/"+strconv.FormatInt(id, 10), nil, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// printJobDetail prints the job's fields, one a line, then its attempts
// as a table.
func printJobDetail(w io.Writer, v *httpapi.JobDetailView) error {
	j := v.Job
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range [][2]string{
		{"job", j.ID}, {"tenant", j.TenantID}, {"kind", j.Kind}, {"status", j.Status}, {"stage", j.Stage},
		{"progress", strconv.Itoa(j.ProgressPercent) + "%"},
		{"attempt", strconv.Itoa(j.Attempt) + "/" + strconv.Itoa(j.MaxAttempts)},
		{"document", orDash(j.DocumentID)}, {"retry_of", strPtrOrDash(j.RetryOf)},
		{"created", j.CreatedAt.Format(time.RFC3339)}, {"started", timeOrDash(j.StartedAt)},
		{"completed", timeOrDash(j.CompletedAt)}, {"error", strPtrOrDash(j.ErrorMessage)},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", f[0], f[1])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(v.Attempts) == 0 {
		_, err := fmt.Fprintln(w, "\nno attempts yet")
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "ATTEMPT\tWORKER\tSTARTED\tENDED\tOUTCOME\tERROR")
	for _, a := range v.Attempts {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%.80s\n", a.Attempt, orDash(a.WorkerID), timeOrDash(a.StartedAt),
			timeOrDash(a.EndedAt), a.Outcome, a.Error)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func strPtrOrDash(s *string) string {
	if s == nil {
		return "-"
	}
	return orDash(*s)
}
