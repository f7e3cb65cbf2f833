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
	"github.com/docketq/docket/queue/sqlite"
)

const tenantsUsage = `usage: docket tenants <create|list|show|update|key|revoke-key|pause|resume|delete> [flags]

  create      --name NAME [--plan free|starter|pro|enterprise] [--concurrency N] [--rate-limit N]
              [--weight N] [--json]
              creates a tenant and prints its first API key (shown once)
  list        [--json]  lists every tenant, oldest first (fetched a page at a time)
  show        TENANT [--json]  a tenant with its API keys (ids and dates, never keys)
  update      TENANT [--name NAME] [--plan P] [--concurrency N] [--rate-limit N] [--weight N] [--json]
              changes the settings given on the command line, as PATCH /v1/admin/tenants/{id}
  key         TENANT [--key-name LABEL] [--json]
              issues another API key for a tenant (shown once)
  revoke-key  TENANT KEY_ID [--json]
              revokes a key (KEY_ID: the 16 characters after dk_ in the key)
  pause       TENANT [--json]  no new job of the tenant starts, in any queue or worker, until resumed
  resume      TENANT [--json]  its jobs start again at once, first job first (docs/operations.md)
  delete      TENANT [--json]  deletes the tenant, its keys, documents, blobs and jobs, for good

TENANT is the tenant's id or its unique name (an id wins over a name).

They open the database, except while an embedded serve runs on the data
dir (SQLite serves one process): then they go through its admin API, with
the admin key of <data-dir>/admin.key. --server URL goes through the admin
API of any server. --json prints what the admin API answers. A tenant's id
may also be given with --tenant, a key's with --key.
`

// tenantsSynopsis is each subcommand's usage line, which -h prints above
// its flags.
var tenantsSynopsis = map[string]string{
	"create":     "--name NAME [flags]",
	"list":       "[flags]",
	"show":       "TENANT [flags]",
	"update":     "TENANT [--name NAME] [--plan P] [--concurrency N] [--rate-limit N] [--weight N] [flags]",
	"key":        "TENANT [--key-name LABEL] [flags]",
	"revoke-key": "TENANT KEY_ID [flags]",
}

// tenantsCmd is a tenants command's flags.
type tenantsCmd struct {
	sf          storeFlags
	server      string
	keyFile     string
	name        string
	plan        string
	concurrency int
	rateLimit   int
	weight      int
	tenantID    string
	keyName     string
	keyID       string
	pageSize    int
	asJSON      bool
	env         envFlags
	set         map[string]bool // the flags given on the command line, not by a variable
}

func (c *tenantsCmd) register(fs *flag.FlagSet, getenv func(string) string) {
	c.sf.register(fs, getenv)
	c.env = envFlags{fs: fs, getenv: getenv}
	e := &c.env
	e.stringVar(&c.server, "server", "DOCKET_SERVER", "", "a running server's base URL (http://host:port): go through its admin API")
	e.stringVar(&c.keyFile, "admin-key-file", "DOCKET_ADMIN_KEY_FILE", "",
		"the admin key for --server (else DOCKET_ADMIN_KEY, else <data-dir>/admin.key)")
	e.stringVar(&c.name, "name", "DOCKET_TENANT_NAME", "", "the tenant's name, unique (create, update)")
	e.stringVar(&c.plan, "plan", "DOCKET_TENANT_PLAN", "free", "free, starter, pro or enterprise: sets the upload rate limit (create, update)")
	e.intVar(&c.concurrency, "concurrency", "DOCKET_TENANT_CONCURRENCY", 1, "documents of the tenant processed at once (create, update)")
	e.intVar(&c.rateLimit, "rate-limit", "DOCKET_TENANT_RATE_LIMIT", 0, "uploads per hour; 0: the plan's (create, update)")
	e.intVar(&c.weight, "weight", "DOCKET_TENANT_WEIGHT", 0, "weight in the document queue's fair shares; 0: the plan's (create, update)")
	e.stringVar(&c.tenantID, "tenant", "DOCKET_TENANT_ID", "", "the tenant's id or name, instead of the argument (show, update, key, revoke-key)")
	e.stringVar(&c.keyName, "key-name", "DOCKET_KEY_NAME", "", "a label for the new key (key)")
	e.stringVar(&c.keyID, "key", "DOCKET_KEY_ID", "", "the id of the key to revoke, instead of the argument (revoke-key)")
	e.intVar(&c.pageSize, "page-size", "DOCKET_TENANTS_PAGE_SIZE", 500, "tenants read per request, 1-500 (list)")
	e.boolVar(&c.asJSON, "json", "DOCKET_TENANTS_JSON", false, "print JSON, as the admin API answers")
}

func runTenants(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, tenantsUsage)
		return errUsage
	}
	if args[0] == "pause" || args[0] == "resume" {
		return runPause(ctx, "tenant", args, getenv, stdout, stderr) // tenants_pause.go
	}
	if args[0] == "delete" {
		return runTenantDelete(ctx, args, getenv, stdout, stderr) // tenants_delete.go
	}
	sub := args[0]
	if _, ok := tenantsSynopsis[sub]; !ok {
		fmt.Fprintf(stderr, "docket tenants: unknown subcommand %q\n\n%s", sub, tenantsUsage)
		return errUsage
	}
	fs := newSubFlagSet("tenants", sub, tenantsSynopsis[sub], stderr)
	var c tenantsCmd
	c.register(fs, getenv)
	pos, err := parseWithArgs(fs, args[1:])
	if err != nil {
		return err
	}
	c.set = commandLineFlags(args[1:])
	if err := c.check(sub, pos); err != nil {
		return err
	}
	admin, err := c.open(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer admin.Close()
	if sub != "create" && sub != "list" {
		if c.tenantID, err = admin.tenantID(ctx, c.tenantID); err != nil {
			return err
		}
	}
	switch sub {
	case "create":
		return c.create(ctx, admin, stdout)
	case "list":
		return c.list(ctx, admin, stdout)
	case "show":
		return c.show(ctx, admin, stdout)
	case "update":
		return c.update(ctx, admin, stdout)
	case "key":
		return c.issueKey(ctx, admin, stdout)
	default:
		return c.revokeKey(ctx, admin, stdout)
	}
}

// check takes the arguments and refuses what the subcommand cannot do
// before anything is opened.
func (c *tenantsCmd) check(sub string, pos []string) error {
	if err := c.env.err(); err != nil {
		return err
	}
	if _, err := c.sf.logger(io.Discard); err != nil {
		return err
	}
	if err := c.takeArgs(sub, pos); err != nil {
		return err
	}
	switch {
	case sub == "create" && c.name == "":
		return errors.New("tenants create: --name is required")
	case sub == "create":
		_, err := docket.ParsePlan(c.plan)
		return err
	case sub == "list" && (c.pageSize < 1 || c.pageSize > 500):
		return fmt.Errorf("tenants list: --page-size %d: want 1 to 500", c.pageSize)
	case sub != "list" && c.tenantID == "":
		return fmt.Errorf("tenants %s: want the tenant's id or name: docket tenants %s %s", sub, sub, tenantsSynopsis[sub])
	case sub == "revoke-key" && c.keyID == "":
		return errors.New("tenants revoke-key: want the key's id: docket tenants revoke-key TENANT KEY_ID")
	case sub == "update":
		return c.checkUpdate()
	}
	return nil
}

// takeArgs sets the tenant (and, for revoke-key, the key) from the
// positional arguments.
func (c *tenantsCmd) takeArgs(sub string, pos []string) error {
	var into []*string
	switch sub {
	case "show", "update", "key":
		into = []*string{&c.tenantID}
	case "revoke-key":
		into = []*string{&c.tenantID, &c.keyID}
	}
	if len(pos) > len(into) {
		return fmt.Errorf("tenants %s: unexpected argument %q: docket tenants %s %s", sub, pos[len(into)], sub, tenantsSynopsis[sub])
	}
	for i, v := range pos {
		if *into[i] != "" && *into[i] != v {
			return fmt.Errorf("tenants %s: %q and the flag's %q: give one", sub, v, *into[i])
		}
		*into[i] = v
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
	got, err := admin.create(ctx, &tenantInput{Name: c.name, Plan: string(plan), Concurrency: c.concurrency, RateLimit: c.rateLimit, Weight: c.weight})
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
	ts, err := admin.list(ctx, c.pageSize)
	if err != nil {
		return err
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"tenants": ts})
	}
	return printTenants(stdout, ts)
}

func printTenants(w io.Writer, ts []httpapi.TenantView) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPLAN\tCONCURRENCY\tUPLOADS/HOUR\tWEIGHT")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\n", t.ID, t.Name, t.Plan, t.Concurrency, t.UploadsPerHour, t.EffectiveWeight)
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

// commandLineFlags returns the names of the flags args gives (args that
// parsed already): the flags an environment variable sets are left out.
func commandLineFlags(args []string) map[string]bool {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c tenantsCmd
	c.register(fs, func(string) string { return "" })
	set := map[string]bool{}
	if _, err := parseWithArgs(fs, args); err == nil {
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	}
	return set
}

// newSubFlagSet is the flag set of `docket <group> <sub>`, whose -h
// prints the subcommand's usage line above its flags.
func newSubFlagSet(group, sub, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(group+" "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: docket %s %s %s\n\nflags:\n", group, sub, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseWithArgs parses flags that may come before, between or after the
// positional arguments, and returns those.
func parseWithArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, parseError(err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}
