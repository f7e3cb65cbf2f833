package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// pauseUsage is the usage of `docket queue pause|resume` and `docket
// tenants pause|resume`, by what is paused; %s is the subcommand.
var pauseUsage = map[string]string{
	"queue": `usage: docket queue %s QUEUE [flags]

Pause stops new claims of the queue's jobs in every worker process within
a second; running jobs finish, enqueues are accepted and wait in order.
Resume starts claiming again at once, where it stopped. The pause stays
until resumed (docs/operations.md). Only a known queue may be paused or
resumed: Docket's own (documents, dispatch), one with jobs in the store or
one paused now; any other name is an error that lists the known queues.
`,
	"tenant": `usage: docket tenants %s TENANT [flags]

TENANT is the tenant's id or its name (an id wins).

Pause stops new claims of the tenant's jobs, in every queue and worker
process, within a second: other tenants are served as before, its running
jobs finish, its uploads are accepted and wait in order. Resume starts its
jobs again at once, first job first (docs/operations.md).
`,
}

// pauseCmd is `docket queue pause|resume` and `docket tenants
// pause|resume`.
type pauseCmd struct {
	what    string // "queue" or "tenant"
	name    string // the queue or tenant id
	paused  bool
	sf      storeFlags
	server  string
	keyFile string
	asJSON  bool
	getenv  func(string) string
	stderr  io.Writer
}

// runPause runs `docket <queue|tenants> <pause|resume> NAME`; args
// starts with the subcommand.
func runPause(ctx context.Context, what string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := &pauseCmd{what: what, paused: args[0] == "pause", getenv: getenv, stderr: stderr}
	fs := flag.NewFlagSet(what+" "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, pauseUsage[what], args[0])
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	c.sf.register(fs, getenv)
	e := &envFlags{fs: fs, getenv: getenv}
	e.stringVar(&c.server, "server", "DOCKET_SERVER", "", "a running server's base URL (http://host:port): go through its admin API")
	e.stringVar(&c.keyFile, "admin-key-file", "DOCKET_ADMIN_KEY_FILE", "",
		"the admin key for --server (else DOCKET_ADMIN_KEY, else <data-dir>/admin.key)")
	e.boolVar(&c.asJSON, "json", "DOCKET_PAUSE_JSON", false, "print what the admin API answers")
	// The name may come before, between or after the flags.
	var names []string
	for rest := args[1:]; ; rest = fs.Args()[1:] {
		if err := fs.Parse(rest); err != nil {
			return parseError(err)
		}
		if fs.NArg() == 0 {
			break
		}
		names = append(names, fs.Arg(0))
	}
	if err := e.err(); err != nil {
		return err
	}
	if len(names) != 1 || names[0] == "" {
		fs.Usage()
		return errUsage
	}
	c.name = names[0]
	if what == "queue" {
		if err := queue.ValidateQueueName(c.name); err != nil {
			return fmt.Errorf("queue %q: want 1-63 of a-z, 0-9, '_', '.' and '-', starting with a letter or digit", c.name)
		}
	}
	if err := c.run(ctx); err != nil {
		return err
	}
	if c.asJSON {
		if what == "queue" {
			return json.NewEncoder(stdout).Encode(httpapi.QueuePauseView{Queue: c.name, Paused: c.paused})
		}
		return json.NewEncoder(stdout).Encode(httpapi.TenantPauseView{TenantID: c.name, Paused: c.paused})
	}
	state := "resumed"
	if c.paused {
		state = "paused"
	}
	_, err := fmt.Fprintf(stdout, "%s %s %s\n", what, c.name, state)
	return err
}

// run pauses or resumes through --server, else the database, else, when
// an embedded serve holds it, through that serve's admin API.
func (c *pauseCmd) run(ctx context.Context) error {
	_, err := databaseOrServer(ctx, &c.sf, c.server, c.stderr,
		func(d driver.Driver) (struct{}, error) { return struct{}{}, c.local(ctx, d) },
		func(base string) (struct{}, error) { return struct{}{}, c.remote(ctx, base) })
	return err
}

// local pauses or resumes on the database.
func (c *pauseCmd) local(ctx context.Context, d driver.Driver) error {
	client := queue.NewClient(d, queue.ClientConfig{})
	if c.what == "queue" {
		store, ok := documents(d)
		if !ok {
			return errors.New("the store has no monitoring views")
		}
		if err := httpapi.CheckQueueKnown(ctx, store, client, c.name); err != nil {
			return err
		}
		if c.paused {
			return client.PauseQueue(ctx, c.name)
		}
		return client.ResumeQueue(ctx, c.name)
	}
	store, ok := documents(d)
	if !ok {
		return errors.New("the store keeps no tenants")
	}
	id, err := storeTenantID(ctx, store, c.name)
	if err != nil {
		return err
	}
	c.name = id
	if _, err := store.TenantGet(ctx, c.name); errors.Is(err, docket.ErrNotFound) {
		return fmt.Errorf("no tenant %q", c.name)
	} else if err != nil {
		return err
	}
	if c.paused {
		return client.PauseTenant(ctx, c.name)
	}
	return client.ResumeTenant(ctx, c.name)
}

func (c *pauseCmd) remote(ctx context.Context, base string) error {
	key, err := adminKeyFor(c.keyFile, c.sf.dataDir, c.getenv)
	if err != nil {
		return err
	}
	verb := "resume"
	if c.paused {
		verb = "pause"
	}
	client := newAdminClient(base, key)
	if c.what == "queue" {
		return client.do(ctx, "POST", "/v1/admin/queues/"+url.PathEscape(c.name)+"/"+verb, nil, nil)
	}
	if c.name, err = client.tenantID(ctx, c.name); err != nil {
		return err
	}
	return client.do(ctx, "POST", "/v1/admin/tenants/"+url.PathEscape(c.name)+"/"+verb, nil, nil)
}

// pausesOf reads the store's pauses for `docket queue health`.
func pausesOf(ctx context.Context, d driver.Driver) (*queue.Pauses, error) {
	return queue.NewClient(d, queue.ClientConfig{}).Pauses(ctx)
}
