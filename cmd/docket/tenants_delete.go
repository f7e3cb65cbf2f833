package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue/driver"
)

const tenantDeleteUsage = `usage: docket tenants delete TENANT [flags]

Deletes a tenant and everything it owns, for good: its API keys at once
(servers stop accepting them within their key cache's TTL, 5 s, and end its
event streams within their stream re-check, 5 s; the server whose admin API
deletes it, at once), its running jobs' leases (their handlers are
cancelled), then its documents with their blobs and chunks, its jobs,
idempotency records and rate-limit slots, a batch at a time, and the tenant.
A deletion cut short (an error, a crash) leaves the tenant unusable and
hidden; running the same command again finishes it (docs/security.md).

It opens the database and the blob store (--blob-url, as serve's), except
while an embedded serve runs on the data dir: then it goes through that
serve's admin API. --server URL goes through the admin API of any server.
`

// tenantDeleteCmd is `docket tenants delete`.
type tenantDeleteCmd struct {
	sf        storeFlags
	server    string
	keyFile   string
	blobURL   string
	batchSize int
	tenantID  string
	asJSON    bool
	getenv    func(string) string
	stderr    io.Writer
}

// runTenantDelete runs `docket tenants delete ID`; args starts with
// "delete".
func runTenantDelete(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := &tenantDeleteCmd{getenv: getenv, stderr: stderr}
	fs := newSubFlagSet("tenants", "delete", "TENANT [flags]", stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, tenantDeleteUsage)
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	c.sf.register(fs, getenv)
	e := &envFlags{fs: fs, getenv: getenv}
	e.stringVar(&c.server, "server", "DOCKET_SERVER", "", "a running server's base URL (http://host:port): go through its admin API")
	e.stringVar(&c.keyFile, "admin-key-file", "DOCKET_ADMIN_KEY_FILE", "",
		"the admin key for --server (else DOCKET_ADMIN_KEY, else <data-dir>/admin.key)")
	e.stringVar(&c.blobURL, "blob-url", "DOCKET_BLOB_URL", "",
		"the blob store of the tenant's files, as serve's --blob-url; default <data-dir>/blobs (database only)")
	e.intVar(&c.batchSize, "batch-size", "DOCKET_TENANT_DELETE_BATCH", docket.DefaultTenantDeleteBatch,
		"rows deleted per transaction (database only)")
	e.stringVar(&c.tenantID, "tenant", "DOCKET_TENANT_ID", "", "the tenant's id or name, instead of the argument")
	e.boolVar(&c.asJSON, "json", "DOCKET_TENANTS_JSON", false, "print JSON, as the admin API answers")
	pos, err := parseWithArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if err := e.err(); err != nil {
		return err
	}
	if err := c.takeArgs(pos); err != nil {
		fs.Usage()
		return err
	}
	v, err := c.run(ctx)
	if err != nil {
		return err
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(v)
	}
	resumed := ""
	if v.Resumed {
		resumed = " (an earlier deletion, finished)"
	}
	_, err = fmt.Fprintf(stdout, "tenant %s deleted%s: %d documents, %d jobs, %d records\n",
		v.TenantID, resumed, v.Documents, v.Jobs, v.Records)
	return err
}

// takeArgs sets the tenant from the argument or --tenant.
func (c *tenantDeleteCmd) takeArgs(pos []string) error {
	switch {
	case len(pos) > 1:
		return fmt.Errorf("tenants delete: unexpected argument %q", pos[1])
	case len(pos) == 1 && c.tenantID != "" && c.tenantID != pos[0]:
		return fmt.Errorf("tenants delete: %q and the flag's %q: give one", pos[0], c.tenantID)
	case len(pos) == 1:
		c.tenantID = pos[0]
	}
	if c.tenantID == "" {
		return errors.New("tenants delete: want the tenant's id: docket tenants delete ID")
	}
	if c.batchSize < 1 {
		return fmt.Errorf("tenants delete: --batch-size %d: want at least 1", c.batchSize)
	}
	return nil
}

// run deletes through --server, else the database, else, when an
// embedded serve holds it, through that serve's admin API
// (databaseOrServer).
func (c *tenantDeleteCmd) run(ctx context.Context) (*httpapi.TenantDeleteView, error) {
	return databaseOrServer(ctx, &c.sf, c.server, c.stderr,
		func(d driver.Driver) (*httpapi.TenantDeleteView, error) { return c.local(ctx, d) },
		func(base string) (*httpapi.TenantDeleteView, error) { return c.remote(ctx, base) })
}

// local deletes on the database, the blobs from --blob-url.
func (c *tenantDeleteCmd) local(ctx context.Context, d driver.Driver) (*httpapi.TenantDeleteView, error) {
	store, ok := documents(d)
	if !ok {
		return nil, errors.New("the store keeps no tenants")
	}
	blobURL := c.blobURL
	if blobURL == "" {
		blobURL = filepath.Join(c.sf.dataDir, "blobs")
	}
	blobs, err := blob.Open(ctx, blobURL)
	if err != nil {
		return nil, err
	}
	if c.tenantID, err = storeTenantID(ctx, store, c.tenantID); err != nil {
		return nil, err
	}
	res, err := store.TenantDelete(ctx, &docket.TenantDeleteParams{
		ID: c.tenantID, BatchSize: c.batchSize,
		DeleteBlobs: func(ctx context.Context, keys []string) error { return blob.DeleteMany(ctx, blobs, keys) },
	})
	if errors.Is(err, docket.ErrNotFound) {
		return nil, fmt.Errorf("no tenant %q", c.tenantID)
	}
	if err != nil {
		return nil, err
	}
	return &httpapi.TenantDeleteView{TenantID: c.tenantID, Resumed: res.Resumed,
		Documents: res.Documents, Jobs: res.Jobs, Records: res.Records}, nil
}

func (c *tenantDeleteCmd) remote(ctx context.Context, base string) (*httpapi.TenantDeleteView, error) {
	key, err := adminKeyFor(c.keyFile, c.sf.dataDir, c.getenv)
	if err != nil {
		return nil, err
	}
	client := newAdminClient(base, key)
	if c.tenantID, err = client.tenantID(ctx, c.tenantID); err != nil {
		return nil, err
	}
	var v httpapi.TenantDeleteView
	if err := client.do(ctx, "DELETE", "/v1/admin/tenants/"+url.PathEscape(c.tenantID), nil, &v); err != nil {
		return nil, err
	}
	return &v, nil
}
