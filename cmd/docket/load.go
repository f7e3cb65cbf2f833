package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/docketq/docket/internal/loadgen"
)

const loadUsage = `usage: docket load [flags]

Drives a running server through its HTTP API as many tenants at once: it
creates the tenants (admin API), uploads documents for all of them
concurrently while the server's workers process them, follows every job to
its end, and reports uploads per second, the 202's latency, each tenant's
completion latency (upload to end, by the server's clock) and Jain's
fairness index of the tenants' completion rates (1 = served alike).
--flood-percent makes the first tenant a flood of that share of the load:
the others must still be served.

With no --server it drives the serve running on --data-dir (the URL serve
writes there), with the admin key serve generated there.

flags:
`

// runLoad runs `docket load`.
func runLoad(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, loadUsage)
		fs.PrintDefaults()
	}
	var (
		cfg                      loadgen.Config
		server, keyFile, dataDir string
		flood, sizeKiB           int
		asJSON                   bool
	)
	e := &envFlags{fs: fs, getenv: getenv}
	e.stringVar(&server, "server", "DOCKET_SERVER", "", "the server's base URL (http://host:port); empty: the serve running on --data-dir")
	e.stringVar(&dataDir, "data-dir", "DOCKET_DATA_DIR", "./docket-data", "where a local serve keeps its URL and admin key")
	e.stringVar(&keyFile, "admin-key-file", "DOCKET_ADMIN_KEY_FILE", "", "the admin key (else DOCKET_ADMIN_KEY, else <data-dir>/admin.key)")
	e.intVar(&cfg.Tenants, "tenants", "DOCKET_LOAD_TENANTS", 10, "tenants created and uploading at once")
	e.intVar(&cfg.Documents, "documents", "DOCKET_LOAD_DOCUMENTS", 100, "documents uploaded in all")
	e.intVar(&flood, "flood-percent", "DOCKET_LOAD_FLOOD_PERCENT", 0, "share of the documents the first tenant uploads, 0-99 (0: all tenants alike)")
	e.intVar(&cfg.Concurrency, "concurrency", "DOCKET_LOAD_CONCURRENCY", 8, "uploads in flight at once")
	e.intVar(&sizeKiB, "size-kib", "DOCKET_LOAD_SIZE_KIB", 16, "each document's size in KiB (plain text)")
	e.stringVar(&cfg.Plan, "plan", "DOCKET_LOAD_PLAN", "enterprise", "the tenants' plan")
	e.intVar(&cfg.Concurrent, "tenant-concurrency", "DOCKET_LOAD_TENANT_CONCURRENCY", 2, "documents of a tenant processed at once")
	e.intVar(&cfg.RateLimit, "rate-limit", "DOCKET_LOAD_RATE_LIMIT", 0, "the tenants' uploads per hour; 0: the plan's")
	e.durationVar(&cfg.Timeout, "timeout", "DOCKET_LOAD_TIMEOUT", 10*time.Minute, "bound on the whole run; jobs unfinished then are reported so")
	e.boolVar(&asJSON, "json", "DOCKET_LOAD_JSON", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return parseError(err)
	}
	if err := e.err(); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "docket load: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	if flood < 0 || flood > 99 || sizeKiB < 1 {
		return fmt.Errorf("docket load: --flood-percent %d (want 0-99), --size-kib %d (want at least 1)", flood, sizeKiB)
	}
	cfg.Flood, cfg.Size = float64(flood)/100, sizeKiB<<10
	cfg.BaseURL = cmp.Or(server, readServeURL(dataDir))
	if cfg.BaseURL == "" {
		return fmt.Errorf("docket load: no --server, and no serve running on %s", dataDir)
	}
	key, err := adminKeyFor(keyFile, dataDir, getenv)
	if err != nil {
		return err
	}
	cfg.AdminKey = key
	if !asJSON {
		cfg.Progress = func(format string, args ...any) { fmt.Fprintf(stderr, "load: "+format+"\n", args...) }
	}
	rep, err := loadgen.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printLoadReport(stdout, rep)
	return nil
}

// printLoadReport writes rep as a short text report and a table per tenant.
func printLoadReport(w io.Writer, rep *loadgen.Report) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/1e6) }
	fmt.Fprintf(w, "uploads:    %d accepted, %d refused with 429 (retried), %d errors, in %.1f s: %.1f uploads/s\n",
		rep.Accepted, rep.Refused, rep.Errors, rep.UploadSeconds, rep.UploadsPerSecond)
	fmt.Fprintf(w, "202:        p50 %s, p95 %s, p99 %s, max %s\n", ms(rep.Accept.P50), ms(rep.Accept.P95), ms(rep.Accept.P99), ms(rep.Accept.Max))
	fmt.Fprintf(w, "jobs:       %d completed, %d failed, %d unfinished, in %.1f s: %.1f documents/s\n",
		rep.Completed, rep.Failed, rep.Unfinished, rep.Seconds, rep.DocumentsPerSecond)
	fmt.Fprintf(w, "fairness:   %.3f (Jain's index of the tenants' completion rates; the flood left out)\n\n", rep.Fairness)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tDOCUMENTS\tCOMPLETED\tP50\tP95\tMAX\tDOCS/S")
	for _, t := range rep.PerTenant {
		name := t.Tenant
		if t.Flood {
			name += " (flood)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%.2f\n", name, t.Documents, t.Completed,
			ms(t.Completion.P50), ms(t.Completion.P95), ms(t.Completion.Max), t.Rate)
	}
	_ = tw.Flush()
}
