package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// bolaKind is the kind of object a route's {id} names.
type bolaKind int

const (
	bolaDocument bolaKind = iota
	bolaJob
)

// bolaRoutes says, for every tenant route with an object id, what the id
// names. A route with an id that is missing here fails the sweep, so a new
// route cannot skip it.
var bolaRoutes = map[string]bolaKind{
	"GET /v1/documents/{id}":        bolaDocument,
	"DELETE /v1/documents/{id}":     bolaDocument,
	"POST /v1/documents/{id}/retry": bolaDocument,
	"GET /v1/documents/{id}/chunks": bolaDocument,
	"GET /v1/jobs/{id}":             bolaJob,
	"POST /v1/jobs/{id}/cancel":     bolaJob,
}

// bolaVictim is tenant B's objects: a failed document with chunks and a
// pending one, and their jobs.
type bolaVictim struct {
	tenant string
	key    string
	docs   []string
	jobs   []int64
}

func newBolaVictim(e *adminEnv) *bolaVictim {
	e.t.Helper()
	ct := e.createTenant("tenant-b", nil)
	v := &bolaVictim{tenant: ct.Tenant.ID, key: ct.APIKey}
	failed, job := e.addDocument(v.tenant, "b-failed.txt")
	claimed := e.claim(time.Minute)
	if claimed.ID != job.ID {
		e.t.Fatalf("claimed job %d, want %d: build the victim before other tenants' jobs", claimed.ID, job.ID)
	}
	e.finish(claimed, queue.OutcomeFailed)
	e.addChunks(v.tenant, failed.ID, "secret text of tenant b")
	pending, job2 := e.addDocument(v.tenant, "b-pending.txt")
	v.docs = []string{failed.ID, pending.ID}
	v.jobs = []int64{job.ID, job2.ID}
	return v
}

// addChunks stores one chunk with its vector for a document.
func (e *adminEnv) addChunks(tenantID, docID, text string) {
	e.t.Helper()
	emb := embeddingForTests()
	vecs, err := emb.Embed(e.ctx, []string{text})
	if err != nil {
		e.t.Fatal(err)
	}
	err = e.driver.InTenant(e.ctx, tenantID, func(tx docket.Tx) error {
		return tx.ChunkReplace(e.ctx, docID, []*docket.Chunk{{
			Index: 0, Text: text, PageStart: 1, PageEnd: 1, Vector: vecs[0], Model: emb.Model(), Dimensions: emb.Dimensions(),
		}})
	})
	if err != nil {
		e.t.Fatalf("add chunks: %v", err)
	}
}

// ids are the path ids of the victim's objects of kind k.
func (v *bolaVictim) ids(k bolaKind) []string {
	if k == bolaDocument {
		return v.docs
	}
	out := make([]string, len(v.jobs))
	for i, j := range v.jobs {
		out[i] = strID(j)
	}
	return out
}

// snapshot is everything about the victim's objects a request could change.
func (e *adminEnv) snapshot(v *bolaVictim) string {
	e.t.Helper()
	var b strings.Builder
	err := e.driver.ReadTenant(e.ctx, v.tenant, func(tx docket.Tx) error {
		docs, err := tx.DocumentList(e.ctx, &docket.DocumentListParams{Limit: 1000})
		for _, d := range docs {
			chunks, err := tx.ChunkList(e.ctx, &docket.ChunkListParams{DocumentID: d.ID})
			if err != nil {
				return err
			}
			info, err := e.blobs.Stat(e.ctx, d.BlobKey)
			fmt.Fprintf(&b, "doc %s job=%d status=%s updated=%s chunks=%d blob=%v/%v\n",
				d.ID, d.JobID, d.Status, d.UpdatedAt, len(chunks), info.Size, err)
		}
		return err
	})
	if err != nil {
		e.t.Fatalf("snapshot documents: %v", err)
	}
	jobs, err := e.queue.List(e.ctx, &queue.JobListParams{TenantID: v.tenant, Limit: 1000})
	if err != nil {
		e.t.Fatalf("snapshot jobs: %v", err)
	}
	for _, j := range jobs {
		fmt.Fprintf(&b, "job %d state=%s attempt=%d updated=%s\n", j.ID, j.State, j.Attempt, j.UpdatedAt)
	}
	return b.String()
}

// TestBOLA_Sweep: every tenant route with an object id,
// called with tenant A's key and tenant B's ids, answers 404 and changes
// nothing of B's.
func TestBOLA_Sweep(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, nil, func(t *testing.T, e *adminEnv) {
		v := newBolaVictim(e)
		keyA := e.createTenant("tenant-a", nil).APIKey
		e.addDocument(e.createTenant("tenant-c", nil).Tenant.ID, "c.txt") // a bystander
		before := e.snapshot(v)
		var swept []string
		for _, rt := range e.srv.Routes() {
			if rt.Admin || rt.Public || !strings.Contains(rt.Pattern, "{") {
				continue
			}
			name := rt.Method + " " + rt.Pattern
			kind, ok := bolaRoutes[name]
			if !ok {
				t.Errorf("route %s has an object id but no BOLA case: add it to bolaRoutes", name)
				continue
			}
			swept = append(swept, name)
			for _, objID := range v.ids(kind) {
				path := strings.Replace(rt.Pattern, "{id}", objID, 1)
				if r := e.do(rt.Method, path, keyA, nil); r.status != http.StatusNotFound {
					t.Errorf("%s %s with another tenant's key: status %d, want 404: %s", rt.Method, path, r.status, r.body)
				}
			}
		}
		for name := range bolaRoutes {
			if !slices.Contains(swept, name) {
				t.Errorf("bolaRoutes has %s, which is not served", name)
			}
		}
		if after := e.snapshot(v); after != before {
			t.Errorf("tenant B's objects changed:\nbefore:\n%safter:\n%s", before, after)
		}
		e.checkListsHide(keyA, v)
		e.checkOwnerReaches(v)
	})
}

// checkListsHide checks A's listings and searches show nothing of B's.
func (e *adminEnv) checkListsHide(keyA string, v *bolaVictim) {
	e.t.Helper()
	for _, path := range []string{"/v1/documents", "/v1/jobs", "/v1/search?q=secret+text+of+tenant+b"} {
		r := e.do("GET", path, keyA, nil)
		if r.status != http.StatusOK {
			e.t.Errorf("GET %s: status %d", path, r.status)
		}
		for _, s := range append([]string{v.tenant, "secret"}, v.docs...) {
			if strings.Contains(string(r.body), s) {
				e.t.Errorf("GET %s as tenant A shows %q of tenant B: %s", path, s, r.body)
			}
		}
	}
}

// checkOwnerReaches checks the same requests with B's own key find the
// objects (so the 404s above came from tenancy, not from bad paths); reads
// first, then writes, the delete last.
func (e *adminEnv) checkOwnerReaches(v *bolaVictim) {
	e.t.Helper()
	names := make([]string, 0, len(bolaRoutes))
	for name := range bolaRoutes {
		names = append(names, name)
	}
	order := func(n string) int { return map[string]int{"GET": 0, "POST": 1, "DELETE": 2}[strings.Fields(n)[0]] }
	slices.SortFunc(names, func(a, b string) int { return order(a) - order(b) })
	for _, name := range names {
		method, pattern, _ := strings.Cut(name, " ")
		path := strings.Replace(pattern, "{id}", v.ids(bolaRoutes[name])[0], 1)
		if r := e.do(method, path, v.key, nil); r.status == http.StatusNotFound || r.status >= 500 || r.status == 401 {
			e.t.Errorf("%s %s with the owner's key: status %d: %s", method, path, r.status, r.body)
		}
	}
}
