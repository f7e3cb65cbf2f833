package httpapi

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchUploaders is how many clients upload at once in the benchmarks.
const benchUploaders = 8

func BenchmarkUpload100KB(b *testing.B) { benchUpload(b, 100<<10) }
func BenchmarkUpload10MB(b *testing.B)  { benchUpload(b, 10<<20) }

// benchUpload measures upload-to-202 through the real server (SQLite,
// local blobs) with benchUploaders concurrent clients, and reports the
// p50 and p99 latency.
func benchUpload(b *testing.B, size int) {
	e := newTenantEnv(b, nil)
	a := e.newTenant(b, "bench", 1_000_000)
	body, ct := multipartFile(b, "bench.txt", bytes.Repeat([]byte("lorem ipsum dolor sit amet\n"), size/27+1)[:size])
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchUploaders * 2}}
	defer client.CloseIdleConnections()
	var (
		mu   sync.Mutex
		lats []time.Duration
	)
	b.SetBytes(int64(size))
	// Exactly benchUploaders clients, whatever GOMAXPROCS is (RunParallel
	// with SetParallelism runs a multiple of GOMAXPROCS: 16 on 16 cores).
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for range benchUploaders {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				start := time.Now()
				if err := postUpload(client, e.url, a.key, ct, body); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(start)
				mu.Lock()
				lats = append(lats, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(lats)
	if len(lats) > 0 {
		b.ReportMetric(float64(lats[len(lats)/2].Microseconds())/1000, "p50_ms")
		b.ReportMetric(float64(lats[(len(lats)*99)/100].Microseconds())/1000, "p99_ms")
	}
}

func postUpload(client *http.Client, base, key, ct string, body []byte) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/v1/documents", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", ct)
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusAccepted {
		return fmt.Errorf("status %d: %s", res.StatusCode, b)
	}
	return nil
}

// genReader yields n bytes of text without holding them.
type genReader struct{ n int64 }

func (g *genReader) Read(p []byte) (int, error) {
	if g.n <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), g.n)]
	for i := range p {
		p[i] = 'a' + byte(i%26)
	}
	g.n -= int64(len(p))
	return len(p), nil
}

// uploadSize is the size TestUpload_MemoryFlat uploads; the figure in
// docs/benchmarks.md is for -upload-size=1073741824 (1 GiB).
var uploadSize = flag.Int64("upload-size", 256<<20, "bytes TestUpload_MemoryFlat uploads")

// TestUpload_MemoryFlat streams a large upload (256 MiB; -upload-size)
// from a generator through the real server: the heap in use never grows by
// 32 MB.
func TestUpload_MemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("large upload")
	}
	size := *uploadSize
	e := newTenantEnv(t, func(c *Config) { c.MaxUploadBytes = size })
	a := e.newTenant(t, "acme", 0)
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	if _, err := mw.CreateFormFile("file", "huge.txt"); err != nil {
		t.Fatal(err)
	}
	tail := "\r\n--" + mw.Boundary() + "--\r\n"
	body := io.MultiReader(bytes.NewReader(head.Bytes()), &genReader{n: size}, strings.NewReader(tail))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/v1/documents", body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(head.Len()) + size + int64(len(tail))
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("Content-Type", mw.FormDataContentType())

	status := 0
	growth := heapGrowth(func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, res.Body)
		status = res.StatusCode
	})
	if status != http.StatusAccepted {
		t.Fatalf("status %d", status)
	}
	t.Logf("%d MiB upload: heap in use grew by at most %.1f MB", size>>20, float64(growth)/(1<<20))
	if growth > 32<<20 {
		t.Errorf("heap in use grew by %d bytes, want < 32 MB", growth)
	}
}

// heapGrowth runs fn and returns the largest growth of the heap in use
// seen while it ran (sampled every 20 ms).
func heapGrowth(fn func()) int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(done)
	<-sampled
	return int64(peak.Load()) - int64(base)
}
