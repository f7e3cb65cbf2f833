package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// envQueue and envKind are pipeline.Queue and pipeline.Kind.
const (
	envQueue = "documents"
	envKind  = "process_document"
)

const testAdminKey = "test-admin-key"

// adminEnv is a real server on a real store (SQLite, or PostgreSQL through
// forEachAdminStore), queue and local blobs.
type adminEnv struct {
	t        *testing.T
	ctx      context.Context
	driver   httpapi.TestStore
	queue    *queue.Client
	blobs    blob.Store
	embedder embedding.Embedder
	srv      *httpapi.Server
	url      string
}

// newAdminEnv starts a server on SQLite; edit may change its
// configuration.
func newAdminEnv(t *testing.T, edit func(*httpapi.Config)) *adminEnv {
	t.Helper()
	return newAdminEnvStore(t, httpapi.OpenTestStore(t, "sqlite"), edit)
}

// forEachAdminStore runs fn as a parallel subtest per store ("sqlite",
// "postgres"), each on a fresh adminEnv configured by edit.
func forEachAdminStore(t *testing.T, edit func(*httpapi.Config), fn func(t *testing.T, e *adminEnv)) {
	t.Helper()
	for _, b := range httpapi.TestBackends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			fn(t, newAdminEnvStore(t, httpapi.OpenTestStore(t, b), edit))
		})
	}
}

// newAdminEnvStore starts a server on store d.
func newAdminEnvStore(t *testing.T, d httpapi.TestStore, edit func(*httpapi.Config)) *adminEnv {
	t.Helper()
	ctx := t.Context()
	blobs, err := blob.NewLocal(t.TempDir())
	if err != nil {
		t.Fatalf("blobs: %v", err)
	}
	q := queue.NewClient(d, queue.ClientConfig{})
	cfg := httpapi.Config{
		Store: d, Queue: q, Blobs: blobs, Embedder: embeddingForTests(),
		AdminKey: testAdminKey, AuthCacheTTL: time.Hour,
		// The auth sweeps try many wrong keys from one address.
		AuthFailuresPerAddr: 1 << 20, AuthFailuresPerKey: 1 << 20,
	}
	if edit != nil {
		edit(&cfg)
	}
	srv, err := httpapi.New(cfg)
	if err != nil {
		t.Fatalf("httpapi.New: %v", err)
	}
	return &adminEnv{t: t, ctx: ctx, driver: d, queue: q, blobs: blobs, embedder: cfg.Embedder, srv: srv, url: startAPIServer(t, srv)}
}

func embeddingForTests() embedding.Embedder { return embedding.NewHashing(0) }

// startAPIServer serves srv on loopback until the test ends, every answer
// checked against openapi.json (httpapi.ValidateResponses).
func startAPIServer(t *testing.T, srv *httpapi.Server) string {
	t.Helper()
	hs := httptest.NewServer(httpapi.ValidateResponses(t, srv.Handler()))
	t.Cleanup(hs.Close)
	return hs.URL
}

// envResponse is an answer read whole.
type envResponse struct {
	status int
	header http.Header
	body   []byte
}

// decode decodes the body into v, failing the test on error.
func (r *envResponse) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// do sends a request with key as bearer (none when empty) and body as
// JSON (a string is sent as is; nil sends none).
func (e *adminEnv) do(method, path, key string, body any) *envResponse {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(e.ctx, method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return e.send(req)
}

func (e *adminEnv) send(req *http.Request) *envResponse {
	e.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read: %v", req.Method, req.URL.Path, err)
	}
	return &envResponse{status: res.StatusCode, header: res.Header, body: b}
}

// admin sends an admin request and checks its status.
func (e *adminEnv) admin(method, path string, body any, want int) *envResponse {
	e.t.Helper()
	r := e.do(method, path, testAdminKey, body)
	if r.status != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, want, r.body)
	}
	return r
}

// createdTenant is the answer of POST /v1/admin/tenants.
type createdTenant struct {
	Tenant httpapi.TenantView `json:"tenant"`
	APIKey string             `json:"api_key"`
	Key    httpapi.APIKeyView `json:"key"`
}

// createTenant creates a tenant through the admin API.
func (e *adminEnv) createTenant(name string, extra map[string]any) createdTenant {
	e.t.Helper()
	body := map[string]any{"name": name, "plan": "free"}
	for k, v := range extra {
		body[k] = v
	}
	var ct createdTenant
	e.admin("POST", "/v1/admin/tenants", body, http.StatusCreated).decode(e.t, &ct)
	return ct
}

// addDocument stores a document of tenant with its pending job, the way
// an upload does (one transaction), and puts its blob.
func (e *adminEnv) addDocument(tenantID, name string) (*docket.Document, *queue.Job) {
	e.t.Helper()
	docID := testUUID()
	doc := &docket.Document{
		ID: docID, Filename: name, ContentType: "text/plain", Size: 5, SHA256: strings.Repeat("0", 64),
		BlobKey: tenantID + "/" + docID + "/" + docID,
	}
	if _, err := e.blobs.Put(e.ctx, doc.BlobKey, strings.NewReader("hello")); err != nil {
		e.t.Fatalf("put blob: %v", err)
	}
	var job *queue.Job
	err := e.driver.InTenant(e.ctx, tenantID, func(tx docket.Tx) error {
		res, err := e.queue.EnqueueTx(e.ctx, tx.Native(), &queue.EnqueueParams{
			Queue: envQueue, Kind: envKind, TenantID: tenantID, Args: map[string]string{"document_id": docID},
		})
		if err != nil {
			return err
		}
		job = res.Job
		doc.JobID = job.ID
		return tx.DocumentInsert(e.ctx, doc)
	})
	if err != nil {
		e.t.Fatalf("add document: %v", err)
	}
	return e.getDocument(tenantID, docID), job
}

func (e *adminEnv) getDocument(tenantID, id string) *docket.Document {
	e.t.Helper()
	var doc *docket.Document
	err := e.driver.ReadTenant(e.ctx, tenantID, func(tx docket.Tx) error {
		var err error
		doc, err = tx.DocumentGet(e.ctx, id)
		return err
	})
	if err != nil {
		e.t.Fatalf("get document %s: %v", id, err)
	}
	return doc
}

func (e *adminEnv) getJob(id int64) *queue.Job {
	e.t.Helper()
	j, err := e.queue.Get(e.ctx, id)
	if err != nil {
		e.t.Fatalf("get job %d: %v", id, err)
	}
	return j
}

// claim claims the next pending document job with the given lease.
func (e *adminEnv) claim(lease time.Duration) *queue.Job {
	e.t.Helper()
	jobs, _, err := e.driver.Executor().JobClaim(e.ctx, &driver.JobClaimParams{
		Queue: envQueue, WorkerID: "test-worker", Max: 1, LeaseDuration: lease,
	})
	if err != nil || len(jobs) != 1 {
		e.t.Fatalf("claim: %d jobs, %v", len(jobs), err)
	}
	return jobs[0]
}

// finish ends a claimed job with outcome.
func (e *adminEnv) finish(j *queue.Job, outcome queue.Outcome) {
	e.t.Helper()
	errs, err := e.driver.Executor().JobFinish(e.ctx, []*driver.JobFinishParams{{
		Lease: j.Lease(), Outcome: outcome, Error: "boom", WorkerID: "test-worker",
	}})
	if err == nil && len(errs) > 0 {
		err = errs[0]
	}
	if err != nil {
		e.t.Fatalf("finish job %d: %v", j.ID, err)
	}
}

// testUUID returns a random version 4 UUID.
func testUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// pollUntil polls cond until it holds or 10 s pass (no sleeps to
// synchronise: a short poll with a deadline).
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}
