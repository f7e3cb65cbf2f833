package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/queue/sqlite"
)

// docket tenants delete on the database: the tenant, its document and the
// document's blob go, another tenant stays; it prints what it deleted
// (--json as the admin API answers), and a second run finds no tenant.
func TestRun_TenantDelete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gone := createTenantCLI(t, dir, "acme")
	kept := createTenantCLI(t, dir, "globex")
	goneDoc := addDocWithBlob(t, dir, gone, 1)
	keptDoc := addDocWithBlob(t, dir, kept, 2)

	out, _, err := docketCmd(t, dir, "tenants", "delete", gone, "--json", "--batch-size", "1")
	var v httpapi.TenantDeleteView
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || v != (httpapi.TenantDeleteView{TenantID: gone, Documents: 1}) {
		t.Fatalf("tenants delete --json: %q, %v", out, err)
	}
	if _, _, err := docketCmd(t, dir, "tenants", "show", gone); err == nil {
		t.Error("tenants show of the deleted tenant succeeded")
	}
	blobs, err := blob.NewLocal(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := blobs.Stat(context.Background(), goneDoc.BlobKey); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("the deleted tenant's blob: %v, want it gone", err)
	}
	if _, err := blobs.Stat(context.Background(), keptDoc.BlobKey); err != nil {
		t.Errorf("the other tenant's blob: %v", err)
	}
	if out, _, err := docketCmd(t, dir, "tenants", "show", kept); err != nil || !strings.Contains(out, kept) {
		t.Errorf("tenants show of the other tenant: %q, %v", out, err)
	}

	if out, _, err := docketCmd(t, dir, "tenants", "delete", kept); err != nil || out != "tenant "+kept+" deleted: 1 documents, 0 jobs, 0 records\n" {
		t.Errorf("tenants delete: %q, %v", out, err)
	}
	if _, _, err := docketCmd(t, dir, "tenants", "delete", gone); err == nil || !strings.Contains(err.Error(), `no tenant "`+gone+`"`) {
		t.Errorf("tenants delete of a deleted tenant: %v, want no tenant", err)
	}
	for _, args := range [][]string{{"tenants", "delete"}, {"tenants", "delete", "a", "b"}} {
		if _, _, err := docketCmd(t, dir, args...); err == nil {
			t.Errorf("%v succeeded, want refused", args)
		}
	}
	_, errOut, err := docketCmd(t, dir, "tenants", "delete", "--help")
	if !errors.Is(err, flag.ErrHelp) || !strings.Contains(errOut, "usage: docket tenants delete") || !strings.Contains(errOut, "-blob-url") {
		t.Errorf("tenants delete --help: %v, printed %q", err, errOut)
	}
}

// While an embedded serve runs, tenants delete goes through its admin API,
// and the tenant's key is refused at once.
func TestRun_TenantDeleteWhileServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, _, _, _ := startServe(t, dir)
	out, errOut, err := docketCmd(t, dir, "tenants", "create", "--name", "acme", "--json")
	var created struct {
		Tenant httpapi.TenantView `json:"tenant"`
		APIKey string             `json:"api_key"`
	}
	if err != nil || json.Unmarshal([]byte(out), &created) != nil {
		t.Fatalf("tenants create while serving: %q, %v\n%s", out, err, errOut)
	}
	get := func() int {
		req, _ := http.NewRequest(http.MethodGet, srv.base+"/v1/documents", nil)
		req.Header.Set("Authorization", "Bearer "+created.APIKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.StatusCode
	}
	if s := get(); s != http.StatusOK {
		t.Fatalf("the new tenant's key: %d", s)
	}
	out, errOut, err = docketCmd(t, dir, "tenants", "delete", created.Tenant.ID)
	if err != nil || !strings.Contains(errOut, "going through its admin API at "+srv.base) || !strings.HasPrefix(out, "tenant "+created.Tenant.ID+" deleted") {
		t.Fatalf("tenants delete while serving: %q, %v\n%s", out, err, errOut)
	}
	if s := get(); s != http.StatusUnauthorized {
		t.Errorf("the deleted tenant's key: %d, want 401", s)
	}
	if _, _, err := docketCmd(t, dir, "tenants", "delete", created.Tenant.ID); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("tenants delete again while serving: %v, want the server's 404", err)
	}
}

// addDocWithBlob stores a document of tenant in the data dir's store, with
// its blob in the data dir's blob store.
func addDocWithBlob(t *testing.T, dir, tenant string, n int) *docket.Document {
	t.Helper()
	ctx := context.Background()
	dRaw, err := sqlite.Open(ctx, filepath.Join(dir, "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	d := storepair.NewSQLite(dRaw)
	defer d.Close()
	blobs, err := blob.NewLocal(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	doc := &docket.Document{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", n),
		Filename: "a.txt", ContentType: "text/plain", Size: 5, BlobKey: tenant + "/doc"}
	if _, err := blobs.Put(ctx, doc.BlobKey, strings.NewReader("hello")); err != nil {
		t.Fatal(err)
	}
	if err := d.InTenant(ctx, tenant, func(tx docket.Tx) error { return tx.DocumentInsert(ctx, doc) }); err != nil {
		t.Fatal(err)
	}
	return doc
}
