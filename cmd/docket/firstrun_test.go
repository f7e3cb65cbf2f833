package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// docketCmd runs a short command of this binary on the data dir.
func docketCmd(t *testing.T, dataDir string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut syncBuffer
	err = run(ctx, args, env(map[string]string{"DOCKET_DATA_DIR": dataDir}), &out, &errOut)
	return out.String(), errOut.String(), err
}

// startServe runs `docket serve` on the data dir until the test ends and
// returns it with its standard output and error.
func startServe(t *testing.T, dataDir string) (server, *syncBuffer, *syncBuffer, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0"},
			env(map[string]string{"DOCKET_DATA_DIR": dataDir}), &stdout, &stderr)
	}()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, stderr.String())
		}
	}
	t.Cleanup(func() {
		if ctx.Err() == nil {
			stop()
		}
	})
	return readBanner(t, stdout.String, stderr.String), &stdout, &stderr, stop
}

// TestServe_FirstRun is a newcomer's first run on the embedded store: the
// first tenant may upload more than a handful of documents an hour; the
// admin key is printed once; tenants and keys are managed with the CLI
// while serve runs (it goes through the admin API), as serve says; a
// failed document is logged and carries its error; a restart prints no
// secret again.
func TestServe_FirstRun(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	srv, stdout, stderr, stop := startServe(t, dataDir)
	adminKey := checkFirstBanner(t, dataDir, srv, stdout.String())
	for i := range 11 { // more than the free plan's 10 an hour
		upload(t, srv, "note.txt", []byte(strings.Repeat("a note ", i+1)))
	}
	checkTenantsWhileServing(t, dataDir, srv)
	if out, errOut, err := docketCmd(t, dataDir, "jobs", "list"); err != nil || strings.Count(out, "\n") != 12 ||
		!strings.Contains(errOut, "going through its admin API at "+srv.base) {
		t.Errorf("jobs list while serving: %v, printed\n%s\n%s\nwant the 11 jobs through the admin API", err, out, errOut)
	}
	id := checkFailedLogged(t, srv, stderr)
	stop()
	if _, err := os.Stat(filepath.Join(dataDir, serveURLFileName)); !os.IsNotExist(err) {
		t.Errorf("serve.url left behind: %v", err)
	}

	// With serve stopped the CLI opens the database; --json names fields
	// as the API does.
	out, _, err := docketCmd(t, dataDir, "jobs", "list", "--status", "failed", "--json")
	var jobs struct {
		Jobs []map[string]any `json:"jobs"`
	}
	if err != nil || json.Unmarshal([]byte(out), &jobs) != nil || len(jobs.Jobs) != 1 ||
		jobs.Jobs[0]["id"] != id || jobs.Jobs[0]["status"] != "failed" || jobs.Jobs[0]["error_message"] == nil {
		t.Errorf("jobs list --json: %v: %s", err, out)
	}

	_, stdout, _, _ = startServe(t, dataDir)
	if again := stdout.String(); strings.Contains(again, "admin_key: ") || strings.Contains(again, adminKey) || keyLine.MatchString(again) {
		t.Errorf("second start printed a secret:\n%s", again)
	}
}

// checkFirstBanner checks what the first start printed and returns the
// admin key.
func checkFirstBanner(t *testing.T, dataDir string, srv server, banner string) string {
	t.Helper()
	keyFile := filepath.Join(dataDir, "admin.key")
	b, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	adminKey := strings.TrimSpace(string(b))
	for _, want := range []string{
		"(enterprise plan, 1000 uploads per hour, 4 documents at once)",
		"admin_key: " + adminKey + "\n",
		"admin_key_file: " + keyFile + "\n",
		"tenants: docket tenants create --name NAME",
		`admin_api: curl -H "Authorization: Bearer $(cat ` + keyFile + `)" ` + srv.base + "/v1/admin/tenants\n",
	} {
		if !strings.Contains(banner, want) {
			t.Errorf("first start printed no %q:\n%s", want, banner)
		}
	}
	return adminKey
}

// checkTenantsWhileServing creates a tenant, issues and revokes a key with
// the CLI while serve holds the database.
func checkTenantsWhileServing(t *testing.T, dataDir string, srv server) {
	t.Helper()
	out, errOut, err := docketCmd(t, dataDir, "tenants", "create", "--name", "bob", "--plan", "pro", "--json")
	if err != nil || !strings.Contains(errOut, "going through its admin API at "+srv.base) {
		t.Fatalf("tenants create while serving: %v\n%s%s", err, out, errOut)
	}
	var created tenantCreated
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Tenant.Name != "bob" || created.Tenant.UploadsPerHour != 200 {
		t.Fatalf("tenants create --json: %v: %s", err, out)
	}
	if code := getJSON(t, server{base: srv.base, key: created.APIKey}, "/v1/documents", &map[string]any{}); code != http.StatusOK {
		t.Errorf("the new tenant's key: GET /v1/documents %d", code)
	}
	if _, _, err := docketCmd(t, dataDir, "tenants", "create", "--name", "bob"); err == nil ||
		!strings.Contains(err.Error(), `a tenant named "bob" already exists`) {
		t.Errorf("a taken name: %v", err)
	}
	out, _, err = docketCmd(t, dataDir, "tenants", "key", "--tenant", created.Tenant.ID, "--key-name", "ci", "--json")
	var issued keyIssued
	if err != nil || json.Unmarshal([]byte(out), &issued) != nil || issued.Key.Name != "ci" {
		t.Fatalf("tenants key: %v: %s", err, out)
	}
	second := server{base: srv.base, key: issued.APIKey}
	if code := getJSON(t, second, "/v1/documents", &map[string]any{}); code != http.StatusOK {
		t.Errorf("the issued key: GET /v1/documents %d", code)
	}
	if _, _, err := docketCmd(t, dataDir, "tenants", "revoke-key", "--tenant", created.Tenant.ID, "--key", issued.Key.ID); err != nil {
		t.Fatalf("tenants revoke-key: %v", err)
	}
	if code := getJSON(t, second, "/v1/documents", &map[string]any{}); code != http.StatusUnauthorized {
		t.Errorf("a revoked key: GET /v1/documents %d, want 401", code)
	}
	out, _, err = docketCmd(t, dataDir, "tenants", "list")
	if err != nil || !strings.Contains(out, "bob") || !strings.Contains(out, "default") {
		t.Errorf("tenants list while serving: %v\n%s", err, out)
	}
}

// checkFailedLogged uploads a malformed PDF and checks that its document
// says why it failed and that serve logged it; it returns the job id.
func checkFailedLogged(t *testing.T, srv server, stderr *syncBuffer) string {
	t.Helper()
	id := upload(t, srv, "broken.pdf", []byte("%PDF-1.7\n%%EOF\n"))
	deadline := time.Now().Add(pipelineWait) // the first parse may compile the PDF engine
	var job map[string]any
	for getJSON(t, srv, "/v1/jobs/"+id, &job); job["status"] != "failed"; getJSON(t, srv, "/v1/jobs/"+id, &job) {
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %v, want failed", id, job)
		}
		time.Sleep(20 * time.Millisecond)
	}
	docID := job["document_id"].(string)
	var doc map[string]any
	getJSON(t, srv, "/v1/documents/"+docID, &doc)
	if e, _ := doc["error"].(string); !strings.HasPrefix(e, "rejected_input: malformed") {
		t.Errorf("failed document's error: %v", doc["error"])
	}
	logged := regexp.MustCompile(`level=ERROR msg="document failed" tenant_id=\S+ document_id=` + docID + `.* error="rejected_input: malformed`)
	for !logged.MatchString(stderr.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("serve logged no failed document:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return id
}
