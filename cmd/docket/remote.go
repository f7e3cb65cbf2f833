package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
)

// serveURLFileName is where an embedded serve writes its base URL, in the
// data dir, while it runs: the tenants commands, which cannot open the
// database serve holds, talk to its admin API instead.
const serveURLFileName = "serve.url"

// writeServeURL writes base into the data dir's serve.url and returns the
// function that removes it.
func writeServeURL(dataDir, base string) (func(), error) {
	path := filepath.Join(dataDir, serveURLFileName)
	if err := os.WriteFile(path, []byte(base+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("serve url: %w", err)
	}
	return func() { _ = os.Remove(path) }, nil
}

// readServeURL returns the base URL of the serve running on the data dir,
// or "" when none wrote one.
func readServeURL(dataDir string) string {
	b, err := os.ReadFile(filepath.Join(dataDir, serveURLFileName))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// printAdminHelp prints how to manage tenants and keys while serve runs.
func printAdminHelp(stdout io.Writer, sf *storeFlags, hf *httpFlags, base string) {
	bearer := "$DOCKET_ADMIN_KEY"
	if hf.adminKeyFile != "" {
		bearer = "$(cat " + hf.adminKeyFile + ")"
	}
	cli := "docket tenants create --name NAME"
	if sf.embedded() {
		cli += "   (while serve runs, the tenants commands go through its admin API)"
	}
	fmt.Fprintf(stdout, "tenants: %s\n", cli)
	fmt.Fprintf(stdout, "admin_api: curl -H \"Authorization: Bearer %s\" %s/v1/admin/tenants\n", bearer, base)
}

// adminClient calls a running server's admin API.
type adminClient struct {
	base string // http://host:port
	key  string
	http *http.Client
}

func newAdminClient(base, key string) *adminClient {
	return &adminClient{base: strings.TrimSuffix(base, "/"), key: key, http: &http.Client{Timeout: time.Minute}}
}

// do sends in (nil: no body) as JSON and decodes the answer into out (nil:
// none expected). A refusal is an error with the problem's detail.
func (c *adminClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("server %s: %w", c.base, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("server %s: %w", c.base, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("server %s: %w", c.base, err)
	}
	if res.StatusCode >= 300 {
		var p struct {
			Detail string `json:"detail"`
		}
		if json.Unmarshal(raw, &p) != nil || p.Detail == "" {
			p.Detail = strings.TrimSpace(string(raw))
		}
		return &remoteError{msg: fmt.Sprintf("server %s: %s %s: %d: %s", c.base, method, path, res.StatusCode, p.Detail), status: res.StatusCode}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("server %s: %s %s: %w", c.base, method, path, err)
	}
	return nil
}

// remoteError is a refusal of the admin API; a 404 is docket.ErrNotFound.
type remoteError struct {
	msg    string
	status int
}

func (e *remoteError) Error() string { return e.msg }

func (e *remoteError) Is(target error) bool {
	return target == docket.ErrNotFound && e.status == http.StatusNotFound
}

// tenantID returns the id of the tenant ref names: ref itself when a
// tenant has that id (an id always wins), else the id of the tenant named
// ref (GET /v1/admin/tenants?name=), else ref, for the command to refuse.
func (c *adminClient) tenantID(ctx context.Context, ref string) (string, error) {
	err := c.do(ctx, "GET", "/v1/admin/tenants/"+url.PathEscape(ref), nil, nil)
	if !errors.Is(err, docket.ErrNotFound) {
		return ref, err
	}
	var page struct {
		Tenants []httpapi.TenantView `json:"tenants"`
	}
	if err := c.do(ctx, "GET", "/v1/admin/tenants?"+url.Values{"name": {ref}}.Encode(), nil, &page); err != nil {
		return "", err
	}
	if len(page.Tenants) == 1 {
		return page.Tenants[0].ID, nil
	}
	return ref, nil
}

// storeTenantID is tenantID on the database.
func storeTenantID(ctx context.Context, store docket.Store, ref string) (string, error) {
	_, err := store.TenantGet(ctx, ref)
	if !errors.Is(err, docket.ErrNotFound) {
		return ref, err
	}
	ts, err := store.TenantList(ctx, &docket.TenantListParams{Name: ref})
	if err != nil {
		return "", err
	}
	if len(ts) == 1 {
		return ts[0].ID, nil
	}
	return ref, nil
}

// adminKeyFor returns the admin key a command uses to reach a server: the
// one in --admin-key-file, else DOCKET_ADMIN_KEY, else the one serve
// generated in the data dir.
func adminKeyFor(keyFile, dataDir string, getenv func(string) string) (string, error) {
	switch {
	case keyFile != "":
		return readAdminKey(keyFile)
	case getenv("DOCKET_ADMIN_KEY") != "":
		return getenv("DOCKET_ADMIN_KEY"), nil
	}
	key, err := readAdminKey(filepath.Join(dataDir, adminKeyFileName))
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("no admin key: give --admin-key-file or DOCKET_ADMIN_KEY (serve generates %s when given none)",
			filepath.Join(dataDir, adminKeyFileName))
	}
	return key, err
}
