package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// server is a running `docket serve` as a test sees it.
type server struct {
	base string // http://127.0.0.1:port
	key  string // the first tenant's API key, "" after the first start
}

var (
	keyLine  = regexp.MustCompile(`(?m)^api_key: (dk_\S+)$`)
	dashLine = regexp.MustCompile(`(?m)^dashboard: (http://\S+)$`)
)

// readBanner waits for the dashboard line (and the key, if printed) in out.
func readBanner(t *testing.T, out func() string, errOut func() string) server {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := out()
		if m := dashLine.FindStringSubmatch(s); m != nil {
			srv := server{base: strings.TrimSuffix(m[1], "/")}
			if k := keyLine.FindStringSubmatch(s); k != nil {
				srv.key = k[1]
			}
			return srv
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve printed no dashboard line\nstdout:\n%s\nstderr:\n%s", s, errOut())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// docket serve with no configuration: SQLite and local blobs in the data
// dir, a first tenant whose printed key uploads a document that completes
// and is then found by search; the dashboard page is served.
func TestServe_UploadToSearch(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0"},
			env(map[string]string{"DOCKET_DATA_DIR": t.TempDir()}), &stdout, &stderr)
	}()
	srv := readBanner(t, stdout.String, stderr.String)
	if srv.key == "" {
		t.Fatalf("no api_key line on first start:\n%s", stdout.String())
	}
	text := "Quarterly report of the lighthouse keepers.\n\nThe lighthouse on the northern cape was repaired in March 2026 for EUR 12,500."
	job := upload(t, srv, "report.txt", []byte(text))
	final := waitJob(t, srv, job, "completed", 60*time.Second)
	if final["progress_percent"].(float64) != 100 {
		t.Errorf("completed job at %v%%", final["progress_percent"])
	}
	var hits struct {
		Results []struct {
			DocumentID string  `json:"document_id"`
			Text       string  `json:"text"`
			Score      float64 `json:"score"`
		} `json:"results"`
	}
	getJSON(t, srv, "/v1/search?k=3&q="+url.QueryEscape("lighthouse repaired"), &hits)
	if len(hits.Results) == 0 || hits.Results[0].DocumentID != final["document_id"] {
		t.Fatalf("search did not find the document: %+v", hits)
	}
	res, err := http.Get(srv.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Contains(page, []byte("<title>Docket</title>")) {
		t.Errorf("dashboard: %d %.200s", res.StatusCode, page)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
}

// upload posts a file and returns its job id.
func upload(t *testing.T, srv server, name string, body []byte) string {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(body)
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.base+"/v1/documents", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+srv.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("upload: %d %s", res.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Job.ID == "" {
		t.Fatalf("upload response %s: %v", raw, err)
	}
	if loc := res.Header.Get("Location"); loc != "/v1/jobs/"+out.Job.ID {
		t.Errorf("Location %q, want /v1/jobs/%s", loc, out.Job.ID)
	}
	return out.Job.ID
}

func getJSON(t *testing.T, srv server, path string, v any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+srv.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, raw)
		}
	}
	return res.StatusCode
}

// waitJob polls a job until it has status want, failing on any other final
// status or at the deadline.
func waitJob(t *testing.T, srv server, id, want string, within time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var j map[string]any
		if code := getJSON(t, srv, "/v1/jobs/"+id, &j); code == http.StatusOK {
			st, _ := j["status"].(string)
			if st == want {
				return j
			}
			if st == "failed" || st == "cancelled" || (st == "completed" && want != "completed") {
				t.Fatalf("job %s ended %s, want %s: %v", id, st, want, j)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not %s within %s", id, want, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scanLines copies a process's output into a buffer line by line.
func scanLines(r io.Reader, w io.Writer) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fmt.Fprintln(w, sc.Text())
	}
}
