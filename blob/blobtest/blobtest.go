// Package blobtest is the conformance suite of blob.Store: Run checks one backend against the
// contract documented on blob.Store, the way testing/fstest checks an fs.FS. Every backend's
// tests call it; a behaviour change starts here. It also starts the servers the S3 and Azure
// backends are tested against: versitygw (StartS3Server) and Azurite (StartAzureServer).
package blobtest

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/docketq/docket/blob"
)

// Backend is what a backend's test hands the suite for one subtest.
type Backend struct {
	// Store is a fresh, empty store.
	Store blob.Store
	// Leftovers lists what failed or cancelled Puts left in the backend beyond Store's view:
	// temporary files, unfinished multipart uploads. Nil if the backend cannot tell.
	Leftovers func(t *testing.T) []string
}

// Sizes used by the suite.
const (
	// LargeSize is the object streamed to check that memory does not grow with size.
	LargeSize = 64 << 20
	// MaxHeapGrowth is how much more heap a Put of LargeSize/2 or LargeSize may use than
	// before it began (the S3 and Azure backends hold at most about 20 MiB: four 5 MiB parts;
	// the local one 1 MiB): well under either size, so a Put that buffers fails.
	MaxHeapGrowth = 24 << 20
	// failLate is where a reader fails in the "late" cases: beyond the first S3 part, and
	// beyond what the S3 transfer manager reads before it chooses a multipart upload (16 MiB).
	failLate = 20 << 20
)

// Run runs the suite. newBackend returns a fresh backend for each subtest. The memory test
// runs first and alone (the heap is process-wide); the other subtests run in parallel.
func Run(t *testing.T, newBackend func(t *testing.T) Backend) {
	t.Helper()
	t.Run("StreamLarge", func(t *testing.T) { testStreamLarge(t, newBackend(t)) })
	tests := []struct {
		name string
		fn   func(*testing.T, Backend)
	}{
		{"PutOpenStatDelete", testPutOpenStatDelete},
		{"EmptyObject", testEmptyObject},
		{"Overwrite", testOverwrite},
		{"NotFound", testNotFound},
		{"PrefixIsNoObject", testPrefixIsNoObject},
		{"InvalidKeys", testInvalidKeys},
		{"OpenRange", testOpenRange},
		{"ReaderAt", testReaderAt},
		{"FailingReader", testFailingReader},
		{"ContextCancelled", testContextCancelled},
		{"ConcurrentPutSameKey", testConcurrentPut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newBackend(t))
		})
	}
}

// put stores data under key or fails the test.
func put(t *testing.T, s blob.Store, key string, data []byte) {
	t.Helper()
	n, err := s.Put(t.Context(), key, bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	if n != int64(len(data)) {
		t.Fatalf("Put(%q) = %d bytes, want %d", key, n, len(data))
	}
}

// wantContent checks that key holds exactly data, through Open and Stat.
func wantContent(t *testing.T, s blob.Store, key string, data []byte) {
	t.Helper()
	rc, size, err := s.Open(t.Context(), key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	if size != int64(len(data)) || !bytes.Equal(got, data) {
		t.Fatalf("Open(%q) = %d bytes (size %d), want %d bytes %q...", key, len(got), size,
			len(data), data[:min(len(data), 16)])
	}
	info, err := s.Stat(t.Context(), key)
	if err != nil {
		t.Fatalf("Stat(%q): %v", key, err)
	}
	if info.Size != int64(len(data)) || info.ModTime.IsZero() {
		t.Fatalf("Stat(%q) = %+v, want size %d and a time", key, info, len(data))
	}
}

// wantNotFound checks that key holds nothing, through Open, OpenRange and Stat.
func wantNotFound(t *testing.T, s blob.Store, key string) {
	t.Helper()
	ctx := t.Context()
	if rc, _, err := s.Open(ctx, key); !errors.Is(err, blob.ErrNotFound) {
		if err == nil {
			rc.Close()
		}
		t.Fatalf("Open(%q): err = %v, want ErrNotFound", key, err)
	}
	if rc, err := s.OpenRange(ctx, key, 0, 10); !errors.Is(err, blob.ErrNotFound) {
		if err == nil {
			rc.Close()
		}
		t.Fatalf("OpenRange(%q): err = %v, want ErrNotFound", key, err)
	}
	if _, err := s.Stat(ctx, key); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Stat(%q): err = %v, want ErrNotFound", key, err)
	}
}

// wantNoLeftovers checks that the backend holds no temporary files or unfinished uploads.
func wantNoLeftovers(t *testing.T, b Backend) {
	t.Helper()
	if b.Leftovers == nil {
		return
	}
	if left := b.Leftovers(t); len(left) > 0 {
		t.Fatalf("leftovers after failed Puts: %q", left)
	}
}

func testPutOpenStatDelete(t *testing.T, b Backend) {
	s, key := b.Store, "tenant-1/doc_01/file-01"
	data := Bytes(1, 100_000)
	put(t, s, key, data)
	wantContent(t, s, key, data)
	if err := s.Delete(t.Context(), key); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantNotFound(t, s, key)
	// The same key again after a delete (the local backend pruned its directories).
	put(t, s, key, data[:10])
	wantContent(t, s, key, data[:10])
}

func testEmptyObject(t *testing.T, b Backend) {
	put(t, b.Store, "t/empty", nil)
	wantContent(t, b.Store, "t/empty", nil)
}

func testOverwrite(t *testing.T, b Backend) {
	s, key := b.Store, "t/d/over"
	put(t, s, key, Bytes(1, 5000))
	put(t, s, key, Bytes(2, 300))
	wantContent(t, s, key, Bytes(2, 300))
}

func testNotFound(t *testing.T, b Backend) {
	s := b.Store
	wantNotFound(t, s, "t/missing/key")
	for range 2 { // idempotent
		if err := s.Delete(t.Context(), "t/missing/key"); err != nil {
			t.Fatalf("Delete of a missing key: %v", err)
		}
	}
	put(t, s, "t/x/y", []byte("y"))
	wantNotFound(t, s, "t/x/z")
	wantNotFound(t, s, "t/x/y/z") // below an object
}

func testPrefixIsNoObject(t *testing.T, b Backend) {
	s := b.Store
	put(t, s, "t/dir/obj", []byte("obj"))
	wantNotFound(t, s, "t/dir")
	wantNotFound(t, s, "t")
	if err := s.Delete(t.Context(), "t/dir"); err != nil {
		t.Fatalf("Delete of a prefix: %v", err)
	}
	wantContent(t, s, "t/dir/obj", []byte("obj"))
}

func testInvalidKeys(t *testing.T, b Backend) {
	s, ctx := b.Store, t.Context()
	for _, key := range InvalidKeys {
		t.Run("", func(t *testing.T) {
			_, err1 := s.Put(ctx, key, bytes.NewReader([]byte("x")))
			_, _, err2 := s.Open(ctx, key)
			_, err3 := s.OpenRange(ctx, key, 0, 1)
			_, err4 := s.Stat(ctx, key)
			err5 := s.Delete(ctx, key)
			for i, err := range []error{err1, err2, err3, err4, err5} {
				if !errors.Is(err, blob.ErrInvalidKey) {
					t.Errorf("key %q, method %d of Put/Open/OpenRange/Stat/Delete: err = %v, want ErrInvalidKey",
						key, i+1, err)
				}
			}
		})
	}
}

// InvalidKeys are keys every store must refuse with ErrInvalidKey.
var InvalidKeys = []string{
	"", "/", "/abs", "a/", "a//b", ".", "..", "../a", "a/..", "a/../b", "a/./b", "a\\b", `..\a`,
	"a b", "a.pdf", "a:b", "a?b", "a%2Fb", "a\x00b", "a\nb", "é", "~a", "a/b/",
	string(make([]byte, 300)), stringOf('a', 256), stringOf('a', 200) + "/" + stringOf('b', 200) +
		"/" + stringOf('c', 200),
}

func stringOf(c byte, n int) string { return string(bytes.Repeat([]byte{c}, n)) }
