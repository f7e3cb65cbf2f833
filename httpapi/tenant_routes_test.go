package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/apikey"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// tenantEnv is a real server (httptest, loopback) on a real store (SQLite,
// or PostgreSQL through forEachStore), queue client, local blob directory
// and hashing embedder. Store calls are counted.
type tenantEnv struct {
	t      *testing.T
	driver TestStore
	store  *countingStore
	queue  *queue.Client
	blobs  *blob.Local
	srv    *Server
	// handler is srv's handler, its answers checked against openapi.json.
	handler http.Handler
	url     string
}

// apiTenant is a tenant with an API key.
type apiTenant struct {
	id, key string
}

// newTenantEnv starts a server on SQLite; edit may change its
// configuration. forEachStore runs a test on every store instead.
func newTenantEnv(t testing.TB, edit func(*Config)) *tenantEnv {
	t.Helper()
	return newTenantEnvClock(t, nil, edit)
}

// newTenantEnvClock is newTenantEnv on SQLite with the store's clock (nil:
// time.Now). Only SQLite takes a clock: PostgreSQL's is the database's.
func newTenantEnvClock(t testing.TB, now func() time.Time, edit func(*Config)) *tenantEnv {
	t.Helper()
	return newTenantEnvStore(t, openSQLite(t, now), edit)
}

// newTenantEnvStore starts a server on store d.
func newTenantEnvStore(t testing.TB, d TestStore, edit func(*Config)) *tenantEnv {
	t.Helper()
	blobs, err := blob.NewLocal(t.TempDir())
	if err != nil {
		t.Fatalf("blobs: %v", err)
	}
	q := queue.NewClient(d, queue.ClientConfig{})
	cs := &countingStore{Store: d}
	cfg := Config{Store: cs, Queue: q, Blobs: blobs, Embedder: embedding.NewHashing(0), AuthCacheTTL: time.Hour,
		AuthFailuresPerAddr: 1 << 20, AuthFailuresPerKey: 1 << 20} // sweeps try many wrong keys
	if edit != nil {
		edit(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h := ValidateResponses(t, srv.Handler())
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	tt, _ := t.(*testing.T)
	return &tenantEnv{t: tt, driver: d, store: cs, queue: q, blobs: blobs, srv: srv, handler: h, url: hs.URL}
}

// newTenant creates a tenant (rateLimit 0: the plan's) with a key.
func (e *tenantEnv) newTenant(tb testing.TB, name string, rateLimit int) apiTenant {
	tb.Helper()
	ctx := context.Background()
	id := strings.ReplaceAll(name, " ", "-")
	if _, err := e.driver.TenantCreate(ctx, &docket.TenantCreateParams{
		ID: id, Name: name, Plan: docket.PlanFree, RateLimit: rateLimit,
	}); err != nil {
		tb.Fatalf("create tenant: %v", err)
	}
	k, err := apikey.Generate()
	if err != nil {
		tb.Fatal(err)
	}
	if err := e.driver.APIKeyInsert(ctx, &docket.APIKey{ID: k.ID, TenantID: id, Hash: k.Hash, Name: "test"}); err != nil {
		tb.Fatalf("insert key: %v", err)
	}
	return apiTenant{id: id, key: k.Plain}
}

// tresp is a response read in full.
type tresp struct {
	status int
	header http.Header
	body   []byte
}

func (r *tresp) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// do sends a request; hdr are extra headers as name, value pairs.
func (e *tenantEnv) do(tb testing.TB, method, path, key string, body io.Reader, hdr ...string) *tresp {
	tb.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, e.url+path, body)
	if err != nil {
		tb.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("%s %s: read: %v", method, path, err)
	}
	return &tresp{status: res.StatusCode, header: res.Header, body: b}
}

// want fails unless r has status code.
func (r *tresp) want(tb testing.TB, code int) *tresp {
	tb.Helper()
	if r.status != code {
		tb.Fatalf("status %d, want %d: %s", r.status, code, r.body)
	}
	return r
}

// multipartFile returns a multipart body with the field "file" and its
// content type.
func multipartFile(tb testing.TB, filename string, data []byte) ([]byte, string) {
	tb.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", filename)
	if err != nil {
		tb.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// upload posts data as the file of a new document.
func (e *tenantEnv) upload(tb testing.TB, key, filename string, data []byte, hdr ...string) *tresp {
	tb.Helper()
	body, ct := multipartFile(tb, filename, data)
	return e.do(tb, http.MethodPost, "/v1/documents", key, bytes.NewReader(body), append([]string{"Content-Type", ct}, hdr...)...)
}

// uploaded is the 202 body of an upload.
type uploaded struct {
	Document DocumentView `json:"document"`
	Job      JobView      `json:"job"`
}

// uploadOK uploads a small text file and returns the 202's body.
func (e *tenantEnv) uploadOK(tb testing.TB, key, text string) uploaded {
	tb.Helper()
	var u uploaded
	e.upload(tb, key, "notes.txt", []byte(text)).want(tb, http.StatusAccepted).decode(tb, &u)
	return u
}

// claim claims the next document job as a worker would.
func (e *tenantEnv) claim(tb testing.TB) *queue.Job {
	tb.Helper()
	jobs, _, err := e.driver.Executor().JobClaim(context.Background(), &driver.JobClaimParams{
		Queue: documentsQueue, WorkerID: "test-worker", Max: 1, LeaseDuration: time.Minute,
	})
	if err != nil || len(jobs) != 1 {
		tb.Fatalf("claim: %v (%d jobs)", err, len(jobs))
	}
	return jobs[0]
}

// finish ends a claimed job's attempt.
func (e *tenantEnv) finish(tb testing.TB, j *queue.Job, outcome queue.Outcome) {
	tb.Helper()
	errs, err := e.driver.Executor().JobFinish(context.Background(), []*driver.JobFinishParams{{
		Lease: j.Lease(), Outcome: outcome, Error: "test failure", WorkerID: "test-worker",
	}})
	if err != nil || errs[0] != nil {
		tb.Fatalf("finish: %v %v", err, errs)
	}
}

// blobCount counts the objects in the blob directory.
func (e *tenantEnv) blobCount(tb testing.TB) int {
	tb.Helper()
	n := 0
	err := filepath.WalkDir(e.blobs.Root(), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// countingStore counts the calls to a docket.Store.
type countingStore struct {
	docket.Store
	calls atomic.Int64
}

func (c *countingStore) TenantCreate(ctx context.Context, p *docket.TenantCreateParams) (*docket.Tenant, error) {
	c.calls.Add(1)
	return c.Store.TenantCreate(ctx, p)
}

func (c *countingStore) TenantGet(ctx context.Context, id string) (*docket.Tenant, error) {
	c.calls.Add(1)
	return c.Store.TenantGet(ctx, id)
}

func (c *countingStore) TenantList(ctx context.Context, p *docket.TenantListParams) ([]*docket.Tenant, error) {
	c.calls.Add(1)
	return c.Store.TenantList(ctx, p)
}

func (c *countingStore) TenantUpdate(ctx context.Context, p *docket.TenantUpdateParams) (*docket.Tenant, error) {
	c.calls.Add(1)
	return c.Store.TenantUpdate(ctx, p)
}

func (c *countingStore) APIKeyInsert(ctx context.Context, k *docket.APIKey) error {
	c.calls.Add(1)
	return c.Store.APIKeyInsert(ctx, k)
}

func (c *countingStore) APIKeyGet(ctx context.Context, id string) (*docket.APIKey, error) {
	c.calls.Add(1)
	return c.Store.APIKeyGet(ctx, id)
}

func (c *countingStore) APIKeyList(ctx context.Context, tenantID string) ([]*docket.APIKey, error) {
	c.calls.Add(1)
	return c.Store.APIKeyList(ctx, tenantID)
}

func (c *countingStore) APIKeyRevoke(ctx context.Context, tenantID, id string) error {
	c.calls.Add(1)
	return c.Store.APIKeyRevoke(ctx, tenantID, id)
}

func (c *countingStore) InTenant(ctx context.Context, tenantID string, fn func(docket.Tx) error) error {
	c.calls.Add(1)
	return c.Store.InTenant(ctx, tenantID, fn)
}

func (c *countingStore) ReadTenant(ctx context.Context, tenantID string, fn func(docket.Tx) error) error {
	c.calls.Add(1)
	return c.Store.ReadTenant(ctx, tenantID, fn)
}
