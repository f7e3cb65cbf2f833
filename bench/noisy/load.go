package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"slices"
	"sync"
	"time"

	// Test support, here for its hostile and ordinary documents: a
	// benchmark is never part of the docket binary.
	"github.com/docketq/docket/pipeline/extract/extracttest" //nolint:depguard // see above
)

var httpClient = &http.Client{Timeout: 2 * time.Minute}

// call sends body (none when nil) to base+path with key and decodes an
// answer of status want into out (unless nil); another status is an error.
func call(ctx context.Context, method, path, key, ctype string, body []byte, want int, out any) error {
	return callBody(ctx, method, path, key, ctype, bytes.NewReader(body), want, out)
}

// callBody is call with a body read as it is sent.
func callBody(ctx context.Context, method, path, key, ctype string, body io.Reader, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	switch {
	case err == nil && resp.StatusCode != want:
		err = fmt.Errorf("%s %s: %s: %.200s", method, path, resp.Status, b)
	case err == nil && out != nil:
		err = json.Unmarshal(b, out)
	}
	return err
}

// createTenant creates a tenant on the enterprise plan (1000 uploads an
// hour) with 4 documents at once, and returns the API key it comes with.
func createTenant(ctx context.Context, adminKey, name string) (string, error) {
	in, _ := json.Marshal(map[string]any{"name": name, "plan": "enterprise", "concurrency": 4})
	var out struct {
		APIKey string `json:"api_key"`
	}
	err := call(ctx, http.MethodPost, "/v1/admin/tenants", adminKey, "application/json", in, http.StatusCreated, &out)
	return out.APIKey, err
}

// doc is an uploaded document and how it ended: Status is the document's,
// or "refused" when its upload was, Error why.
type doc struct {
	Name, ID, Job, Status, Error, Note string
	Size                               int
	EndedAfterS                        float64 // its upload to its last job's end, by the server's clock
}

func (d *doc) ended() bool {
	return slices.Contains([]string{"completed", "failed", "cancelled", "refused"}, d.Status)
}

// upload sends data as a multipart upload (field "file") named name. The
// body is streamed, not built: a client that copied A's 60 MiB documents
// into buffers would stall its own B requests in garbage collection, and
// measure itself rather than the server.
func upload(ctx context.Context, key, name string, data []byte) *doc {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		fw, err := mw.CreateFormFile("file", name)
		if err == nil {
			_, err = fw.Write(data)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	var out struct{ Document, Job struct{ ID, Status string } }
	if err := callBody(ctx, http.MethodPost, "/v1/documents", key, mw.FormDataContentType(), pr, http.StatusAccepted, &out); err != nil {
		_ = pr.CloseWithError(err)
		return &doc{Name: name, Size: len(data), Status: "refused", Error: err.Error()}
	}
	return &doc{Name: name, Size: len(data), ID: out.Document.ID, Job: out.Job.ID, Status: out.Document.Status}
}

// waitDocs reads each unfinished document every second until all have
// ended, or limit has passed (context.DeadlineExceeded).
func waitDocs(ctx context.Context, key string, docs []*doc, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		open := 0
		for _, d := range docs {
			var v struct {
				Status, Error string
				JobID         string    `json:"job_id"`
				Created       time.Time `json:"created_at"`
			}
			var j struct {
				Updated time.Time `json:"updated_at"`
			}
			if d.ended() {
				continue
			} else if err := call(ctx, http.MethodGet, "/v1/documents/"+d.ID, key, "", nil, http.StatusOK, &v); err != nil {
				return err
			}
			if d.Status, d.Error = v.Status, v.Error; !d.ended() {
				open++
			} else if call(ctx, http.MethodGet, "/v1/jobs/"+v.JobID, key, "", nil, http.StatusOK, &j) == nil {
				d.EndedAfterS = j.Updated.Sub(v.Created).Seconds()
			}
		}
		if open == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// latency summarises durations, in milliseconds, by nearest rank.
type latency struct{ P50, P95, P99, Max float64 }

func summarise(ds []time.Duration) latency {
	s := slices.Sorted(slices.Values(ds))
	at := func(q float64) float64 {
		if len(s) == 0 {
			return 0
		}
		return float64(s[max(0, int(math.Ceil(q*float64(len(s))))-1)]) / float64(time.Millisecond)
	}
	return latency{at(0.5), at(0.95), at(0.99), at(1)}
}

// phase is one run of B's load. A failed request counts in Errors, and in
// the latencies with the time it took. Slowest is B's three slowest
// uploads.
type phase struct {
	UploadMs, SearchMs latency
	Errors             int
	Slowest            []sample
}

// sample is one of B's requests: when it started, in seconds into its
// phase, and how long it took.
type sample struct {
	AtS, Ms float64
	Name    string
}

// runB runs B's load once, its documents numbered from first: Uploads
// documents one after another at a steady pace and, beside them, Searches
// searches of B's words, likewise. It appends the documents to docs.
func runB(ctx context.Context, key string, sz sizes, first int, docs *[]*doc) phase {
	var ups []time.Duration
	var failed int
	var wg sync.WaitGroup
	begin := time.Now()
	samples := make([]sample, sz.Uploads)
	wg.Go(func() {
		ups, failed = paced(ctx, sz.Uploads, sz.UploadPace, func(i int) error {
			name, data := bDocument(first + i)
			t := time.Now()
			defer func() {
				samples[i] = sample{t.Sub(begin).Seconds(), float64(time.Since(t)) / float64(time.Millisecond), name}
			}()
			d := upload(ctx, key, name, data)
			if d.ID == "" {
				return fmt.Errorf("upload %s: %s", name, d.Error)
			}
			*docs = append(*docs, d)
			return nil
		})
	})
	rng := rand.New(rand.NewPCG(uint64(first), 3))
	searches, searchFailed := paced(ctx, sz.Searches, sz.SearchPace, func(int) error {
		return call(ctx, http.MethodGet, "/v1/search?q="+words[rng.IntN(bWords)], key, "", nil, http.StatusOK, nil)
	})
	wg.Wait()
	slices.SortFunc(samples, func(a, b sample) int { return cmp.Compare(b.Ms, a.Ms) })
	return phase{summarise(ups), summarise(searches), failed + searchFailed, samples[:min(3, len(samples))]}
}

// paced calls f(0), ..., f(n-1), call i starting i×pace after the first or
// at once when the one before ended later, and returns how long each took
// and how many failed (logged).
func paced(ctx context.Context, n int, pace time.Duration, f func(int) error) (took []time.Duration, failed int) {
	for i, start := 0, time.Now(); i < n && ctx.Err() == nil; i++ {
		time.Sleep(time.Until(start.Add(time.Duration(i) * pace)))
		t := time.Now()
		if err := f(i); err != nil {
			failed++
			logf("B: %v", err)
		}
		took = append(took, time.Since(t))
	}
	return took, failed
}

// bDocument returns B's document i: text or Markdown of 2-20 KB of B's
// words, or every tenth a 5-page PDF.
func bDocument(i int) (string, []byte) {
	rng := rand.New(rand.NewPCG(uint64(i), 1))
	text := prose(rng, words[:bWords], 2<<10+rng.IntN(18<<10))
	switch i % 10 {
	case 9:
		p := extracttest.ProsePDF(5)
		p.Title = fmt.Sprintf("B report %d", i)
		return fmt.Sprintf("b-%03d.pdf", i), p.Bytes()
	case 1, 3, 5, 7:
		return fmt.Sprintf("b-%03d.md", i), append(fmt.Appendf(nil, "# Notes %d\n\n", i), text...)
	}
	return fmt.Sprintf("b-%03d.txt", i), text
}

// attackPayloads makes A's documents (before the run, so that making them
// takes no CPU from serve): a text of "$1 " repeated, a text of ChunkBytes
// of varied words (a chunk every 680 of them), a flate bomb PDF and, last,
// the document of the cancel/retry loop.
func attackPayloads(sz sizes) (names []string, data [][]byte) {
	rng := rand.New(rand.NewPCG(7, 7))
	return []string{"dollars.txt", "chunks.txt", "flate-bomb.pdf", "cancel-retry"}, [][]byte{
		bytes.Repeat([]byte("$1 "), sz.DollarBytes/3), prose(rng, words[bWords:], sz.ChunkBytes),
		extracttest.FlateBombPDF(sz.BombBytes), prose(rng, words[bWords:], sz.MediumBytes)}
}

// attackA uploads A's documents all at once, with the cancel/retry loop
// beside them, and returns them (not yet ended).
func attackA(ctx context.Context, key string, names []string, data [][]byte, rounds int) []*doc {
	last := len(names) - 1
	docs := make([]*doc, last+rounds)
	var wg sync.WaitGroup
	for i := range last {
		wg.Go(func() { docs[i] = upload(ctx, key, names[i], data[i]) })
	}
	for r := range rounds {
		docs[last+r] = cancelRetry(ctx, key, fmt.Sprintf("cancel-retry-%02d.txt", r), append(fmt.Appendf(nil, "%d\n", r), data[last]...))
	}
	wg.Wait()
	return docs
}

// cancelRetry uploads a document, cancels its job once it runs (or after
// 10 s of waiting for that) and retries the document, whose new job is then
// the one that ends.
func cancelRetry(ctx context.Context, key, name string, data []byte) *doc {
	d := upload(ctx, key, name, data)
	var j struct{ Status string }
	for wait := time.Now().Add(10 * time.Second); d.ID != "" && time.Now().Before(wait); time.Sleep(50 * time.Millisecond) {
		if call(ctx, http.MethodGet, "/v1/jobs/"+d.Job, key, "", nil, http.StatusOK, &j) != nil || j.Status != "pending" {
			break
		}
	}
	var r struct{ Job struct{ ID string } }
	switch {
	case d.ID == "":
	case call(ctx, http.MethodPost, "/v1/jobs/"+d.Job+"/cancel", key, "", nil, http.StatusOK, nil) != nil:
		d.Note = "not cancelled: the job was " + j.Status
	case call(ctx, http.MethodPost, "/v1/documents/"+d.ID+"/retry", key, "", nil, http.StatusAccepted, &r) != nil:
		d.Note = "cancelled while " + j.Status + ", retry refused"
	default:
		d.Job, d.Note = r.Job.ID, "cancelled while "+j.Status+", retried"
	}
	return d
}

// words are made-up words of 3 or 4 syllables (the base-16 digits of their
// index + 256): B's are the first bWords, A's the rest.
const bWords = 600

var words = func() []string {
	syl := []string{"ka", "lo", "mi", "ne", "ru", "ta", "so", "vi", "de", "pa", "gor", "lin", "mer", "tas", "bel", "dru"}
	w := make([]string, bWords+20000)
	for i := range w {
		for n := i + 256; n > 0; n /= 16 {
			w[i] += syl[n%16]
		}
	}
	return w
}()

// prose returns size bytes of words, in sentences of 12 words, a line each.
func prose(rng *rand.Rand, words []string, size int) []byte {
	b := make([]byte, 0, size+32)
	for i := 0; len(b) < size; i++ {
		switch {
		case i > 0 && i%12 == 0:
			b = append(b, ".\n"...)
		case i > 0:
			b = append(b, ' ')
		}
		b = append(b, words[rng.IntN(len(words))]...)
	}
	return b[:size]
}
