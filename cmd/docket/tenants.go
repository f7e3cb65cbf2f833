package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/sqlite"
)

const tenantsUsage = `usage: docket tenants <create|list|key|revoke-key> [flags]

  create      --name NAME [--plan free|starter|pro|enterprise] [--concurrency N] [--rate-limit N] [--json]
              creates a tenant and prints its first API key (shown once)
  list        [--json]  lists the tenants
  key         --tenant ID [--key-name LABEL] [--json]
              issues another API key for a tenant (shown once)
  revoke-key  --tenant ID --key KEY_ID
              revokes a key

They open the database, except while an embedded serve runs on the data
dir (SQLite serves one process): then they go through its admin API, with
the admin key of <data-dir>/admin.key. --server URL goes through the admin
API of any server. --json prints what the admin API answers.
`

// tenantsCmd is a tenants command's flags.
type tenantsCmd struct {
	sf          storeFlags
	server      string
	keyFile     string
	name        string
	plan        string
	concurrency int
	rateLimit   int
	tenantID    string
	keyName     string
	keyID       string
	asJSON      bool
	env         envFlags
}

func (c *tenantsCmd) register(fs *flag.FlagSet, getenv func(string) string) {
	c.sf.register(fs, getenv)
	c.env = envFlags{fs: fs, getenv: getenv}
	e := &c.env
	e.stringVar(&c.server, "server", "DOCKET_SERVER", "", "a running server's base URL (http://host:port): go through its admin API")
	e.stringVar(&c.keyFile, "admin-key-file", "DOCKET_ADMIN_KEY_FILE", "",
		"the admin key for --server (else DOCKET_ADMIN_KEY, else <data-dir>/admin.key)")
	e.stringVar(&c.name, "name", "DOCKET_TENANT_NAME", "", "the tenant's name, unique (create)")
	e.stringVar(&c.plan, "plan", "DOCKET_TENANT_PLAN", "free", "free, starter, pro or enterprise: sets the upload rate limit (create)")
	e.intVar(&c.concurrency, "concurrency", "DOCKET_TENANT_CONCURRENCY", 1, "documents of the tenant processed at once (create)")
	e.intVar(&c.rateLimit, "rate-limit", "DOCKET_TENANT_RATE_LIMIT", 0, "uploads per hour; 0: the plan's (create)")
	e.stringVar(&c.tenantID, "tenant", "DOCKET_TENANT_ID", "", "the tenant's id (key, revoke-key)")
	e.stringVar(&c.keyName, "key-name", "DOCKET_KEY_NAME", "", "a label for the new key (key)")
	e.stringVar(&c.keyID, "key", "DOCKET_KEY_ID", "", "the id of the key to revoke (key_id; the 16 characters after dk_ in the key) (revoke-key)")
	e.boolVar(&c.asJSON, "json", "DOCKET_TENANTS_JSON", false, "print JSON, as the admin API answers")
}

func runTenants(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, tenantsUsage)
		return errUsage
	}
	sub := args[0]
	switch sub {
	case "create", "list", "key", "revoke-key":
	default:
		fmt.Fprintf(stderr, "docket tenants: unknown subcommand %q\n\n%s", sub, tenantsUsage)
		return errUsage
	}
	fs := flag.NewFlagSet("tenants "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c tenantsCmd
	c.register(fs, getenv)
	if err := fs.Parse(args[1:]); err != nil {
		return parseError(err)
	}
	if err := c.check(sub); err != nil {
		return err
	}
	admin, err := c.open(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer admin.Close()
	switch sub {
	case "create":
		return c.create(ctx, admin, stdout)
	case "list":
		return c.list(ctx, admin, stdout)
	case "key":
		return c.issueKey(ctx, admin, stdout)
	default:
		if err := admin.revokeKey(ctx, c.tenantID, c.keyID); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "key %s revoked\n", c.keyID)
		return nil
	}
}

// check refuses what the subcommand cannot do before anything is opened.
func (c *tenantsCmd) check(sub string) error {
	if err := c.env.err(); err != nil {
		return err
	}
	if _, err := c.sf.logger(io.Discard); err != nil {
		return err
	}
	switch {
	case sub == "create" && c.name == "":
		return errors.New("tenants create: --name is required")
	case sub == "create":
		_, err := docket.ParsePlan(c.plan)
		return err
	case (sub == "key" || sub == "revoke-key") && c.tenantID == "":
		return fmt.Errorf("tenants %s: --tenant is required", sub)
	case sub == "revoke-key" && c.keyID == "":
		return errors.New("tenants revoke-key: --key is required")
	}
	return nil
}

// open returns the admin of --server, else of the database, else, when an
// embedded serve holds the database, of that serve.
func (c *tenantsCmd) open(ctx context.Context, getenv func(string) string, stderr io.Writer) (tenantAdmin, error) {
	if c.server != "" {
		return c.remote(c.server, getenv)
	}
	d, err := c.sf.open(ctx)
	if err == nil {
		return newStoreAdmin(d)
	}
	if base := readServeURL(c.sf.dataDir); errors.Is(err, sqlite.ErrLocked) && c.sf.embedded() && base != "" {
		fmt.Fprintf(stderr, "docket: serve is running on %s; going through its admin API at %s\n", c.sf.dataDir, base)
		return c.remote(base, getenv)
	}
	return nil, err
}

func (c *tenantsCmd) remote(base string, getenv func(string) string) (tenantAdmin, error) {
	key, err := adminKeyFor(c.keyFile, c.sf.dataDir, getenv)
	if err != nil {
		return nil, err
	}
	return &remoteAdmin{c: newAdminClient(base, key)}, nil
}

func (c *tenantsCmd) create(ctx context.Context, admin tenantAdmin, stdout io.Writer) error {
	plan, _ := docket.ParsePlan(c.plan)
	got, err := admin.create(ctx, &tenantInput{Name: c.name, Plan: string(plan), Concurrency: c.concurrency, RateLimit: c.rateLimit})
	if err != nil {
		return err
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(got)
	}
	fmt.Fprintf(stdout, "tenant_id: %s\napi_key: %s\n", got.Tenant.ID, got.APIKey)
	return nil
}

func (c *tenantsCmd) list(ctx context.Context, admin tenantAdmin, stdout io.Writer) error {
	ts, err := admin.list(ctx)
	if err != nil {
		return err
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"tenants": ts})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPLAN\tCONCURRENCY\tUPLOADS/HOUR")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\n", t.ID, t.Name, t.Plan, t.Concurrency, t.UploadsPerHour)
	}
	return tw.Flush()
}

func (c *tenantsCmd) issueKey(ctx context.Context, admin tenantAdmin, stdout io.Writer) error {
	got, err := admin.issueKey(ctx, c.tenantID, c.keyName)
	if err != nil {
		return err
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(got)
	}
	fmt.Fprintf(stdout, "key_id: %s\napi_key: %s\n", got.Key.ID, got.APIKey)
	return nil
}

// The admin API's bodies, which --json prints.
type (
	tenantInput struct {
		Name        string `json:"name"`
		Plan        string `json:"plan"`
		Concurrency int    `json:"concurrency"`
		RateLimit   int    `json:"rate_limit"`
	}
	tenantCreated struct {
		Tenant httpapi.TenantView `json:"tenant"`
		APIKey string             `json:"api_key"`
		Key    httpapi.APIKeyView `json:"key"`
	}
	keyIssued struct {
		APIKey string             `json:"api_key"`
		Key    httpapi.APIKeyView `json:"key"`
	}
)

// tenantAdmin manages tenants and keys: in the database, or through a
// server's admin API.
type tenantAdmin interface {
	create(ctx context.Context, in *tenantInput) (*tenantCreated, error)
	list(ctx context.Context) ([]httpapi.TenantView, error)
	issueKey(ctx context.Context, tenantID, name string) (*keyIssued, error)
	revokeKey(ctx context.Context, tenantID, keyID string) error
	Close() error
}
