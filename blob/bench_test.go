package blob_test

import (
	"bytes"
	"io"
	"testing"

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
