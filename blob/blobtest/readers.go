package blobtest

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
)

// Data returns a reader of size deterministic pseudo-random bytes: the same seed and size
// give the same bytes. It allocates nothing per read, so it can stand for a body of any size.
func Data(seed uint64, size int64) io.Reader {
	var key [32]byte
	for i := range 8 {
		key[i] = byte(seed >> (8 * i))
	}
	return io.LimitReader(rand.NewChaCha8(key), size)
}

// Bytes returns Data(seed, size) in memory, for small objects.
func Bytes(seed uint64, size int) []byte {
	b := make([]byte, size)
	if _, err := io.ReadFull(Data(seed, int64(size)), b); err != nil {
		panic(err)
	}
	return b
}

// sum returns the SHA-256 of everything r yields.
func sum(tb testing.TB, r io.Reader) [sha256.Size]byte {
	tb.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		tb.Fatalf("read: %v", err)
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// errBroken is what failingReader returns.
var errBroken = errors.New("blobtest: reader broke")

// failingReader yields the bytes of r up to after bytes, then fails with errBroken.
type failingReader struct {
	r     io.Reader
	after int64
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errBroken
	}
	if int64(len(p)) > f.after {
		p = p[:f.after]
	}
	n, err := f.r.Read(p)
	f.after -= int64(n)
	return n, err
}

// cancellingReader yields the bytes of r and calls cancel once it has yielded after bytes;
// it goes on yielding, so only the store's own context check can stop the Put.
type cancellingReader struct {
	r      io.Reader
	after  int64
	cancel context.CancelFunc
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.after -= int64(n)
	if c.after <= 0 {
		c.cancel()
	}
	return n, err
}

// heapSampler passes r through and, every sampleEvery bytes, collects garbage and samples the
// heap in use, keeping the peak. Sampling on the reading goroutine sees the heap while the
// store is mid-Put; collecting first measures what the Put holds, not how far the collector
// let garbage pile up (up to GOGC% more).
type heapSampler struct {
	r     io.Reader
	since int64
	peak  uint64
}

const sampleEvery = 2 << 20

func (h *heapSampler) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.since += int64(n)
	if h.since >= sampleEvery || err != nil {
		h.since = 0
		h.peak = max(h.peak, heapInUse())
	}
	return n, err
}

// heapInUse returns the heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
