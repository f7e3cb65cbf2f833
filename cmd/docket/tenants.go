package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

const tenantsUsage = `usage: docket tenants <create|list> [flags]

  create --name NAME [--plan free|starter|pro|enterprise] [--concurrency N] [--rate-limit N] [--json]
         creates a tenant and prints its API key (shown once)
  list   lists the tenants
`

func runTenants(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, tenantsUsage)
		return errUsage
	}
	switch args[0] {
	case "create":
		return runTenantsCreate(ctx, args[1:], getenv, stdout, stderr)
	case "list":
		return runTenantsList(ctx, args[1:], getenv, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "docket tenants: unknown subcommand %q\n\n%s", args[0], tenantsUsage)
		return errUsage
	}
}

func runTenantsCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tenants create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs, getenv)
	name := fs.String("name", "", "the tenant's name (unique)")
	plan := fs.String("plan", "free", "free, starter, pro or enterprise (sets the upload rate limit)")
	concurrency := fs.Int("concurrency", docket.DefaultConcurrency, "documents of the tenant processed at once")
	rateLimit := fs.Int("rate-limit", 0, "uploads per hour (0: the plan's)")
	asJSON := fs.Bool("json", false, "print {tenant_id, api_key} as JSON")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	p, err := docket.ParsePlan(*plan)
	if err != nil {
		return err
	}
	if *name == "" {
		return fmt.Errorf("tenants create: --name is required")
	}
	d, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	store, ok := d.(docket.Store)
	if !ok {
		return fmt.Errorf("the store does not keep tenants")
	}
	client := queue.NewClient(d, queue.ClientConfig{})
	t, key, err := docket.Provision(ctx, store, client, docket.TenantCreateParams{
		Name: *name, Plan: p, Concurrency: *concurrency, RateLimit: *rateLimit,
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]string{"tenant_id": t.ID, "api_key": key.Plain})
	}
	fmt.Fprintf(stdout, "tenant_id: %s\napi_key: %s\n", t.ID, key.Plain)
	return nil
}

func runTenantsList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tenants list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	d, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	store, ok := d.(docket.Store)
	if !ok {
		return fmt.Errorf("the store does not keep tenants")
	}
	ts, err := store.TenantList(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPLAN\tCONCURRENCY\tUPLOADS/HOUR")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\n", t.ID, t.Name, t.Plan, t.Concurrency, t.UploadsPerHour())
	}
	return tw.Flush()
}
