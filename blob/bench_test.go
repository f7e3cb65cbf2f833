package blob_test

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/blob/blobtest"
)

const benchSize = 10 << 20

// BenchmarkStore measures Put and Open of a 10 MB object on each backend (MB/s).
func BenchmarkStore(b *testing.B) {
	b.Run("Local", func(b *testing.B) { benchStore(b, newLocal(b)) })
	b.Run("S3", func(b *testing.B) {
		s, _ := newS3Fixture(b).store(b)
		benchStore(b, s)
	})
	b.Run("Azure", func(b *testing.B) { benchStore(b, newAzureFixture(b).store(b)) })
}

func benchStore(b *testing.B, s blob.Store) {
	data := blobtest.Bytes(1, benchSize)
	const key = "bench/obj/put"
	b.Run("Put10MB", func(b *testing.B) {
		b.SetBytes(benchSize)
		for b.Loop() {
			if _, err := s.Put(b.Context(), key, bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Open10MB", func(b *testing.B) {
		if _, err := s.Put(b.Context(), key, bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(benchSize)
		for b.Loop() {
			rc, _, err := s.Open(b.Context(), key)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, rc); err != nil {
				b.Fatal(err)
			}
			rc.Close()
		}
	})
}

// concurrentPuts is how many uploads BenchmarkLocal_ConcurrentPut runs at a time.
const concurrentPuts = 8

// BenchmarkLocal_ConcurrentPut keeps 8 Puts of 10 MB in flight, each under a new key in a new
// directory ("bench/<n>/obj", like "<tenant>/<doc>/<uuid>"), and reports the latency of one Put
// (p50-ms, p99-ms): what an upload waits for before its 202. MB/s is the aggregate throughput.
// The bodies come in reads of at most Reads bytes; mime/multipart yields about 4 KiB.
func BenchmarkLocal_ConcurrentPut(b *testing.B) {
	data := blobtest.Bytes(1, benchSize)
	for _, size := range []int{4 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("Reads=%dKiB", size>>10), func(b *testing.B) {
			s := newLocal(b)
			b.SetBytes(benchSize)
			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, concurrentPuts)
			b.ResetTimer()
			for range concurrentPuts {
				wg.Go(func() {
					for {
						i := int(next.Add(1)) - 1
						if i >= b.N {
							return
						}
						key := fmt.Sprintf("bench/%d/obj", i)
						start := time.Now()
						_, err := s.Put(b.Context(), key, &shortReader{r: bytes.NewReader(data), max: size})
						lat[i] = time.Since(start)
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			slices.Sort(lat)
			b.ReportMetric(percentileMs(lat, 50), "p50-ms")
			b.ReportMetric(percentileMs(lat, 99), "p99-ms")
		})
	}
}

// percentileMs returns the p-th percentile of sorted (nearest rank) in milliseconds.
func percentileMs(sorted []time.Duration, p int) float64 {
	i := max((len(sorted)*p+99)/100-1, 0)
	return float64(sorted[i]) / float64(time.Millisecond)
}

// shortReader reads from r at most max bytes at a time, and hides r's WriteTo.
type shortReader struct {
	r   io.Reader
	max int
}

func (s *shortReader) Read(p []byte) (int, error) {
	if len(p) > s.max {
		p = p[:s.max]
	}
	return s.r.Read(p)
}
