package blob_test

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/blob/blobtest"
)

// newLocal returns a Local store in a temporary directory.
func newLocal(t testing.TB) *blob.Local {
	t.Helper()
	s, err := blob.NewLocal(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLocal(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blobtest.Backend {
		s := newLocal(t)
		return blobtest.Backend{Store: s, Leftovers: func(t *testing.T) []string { return tempFiles(t, s.Root()) }}
	})
}

// tempFiles lists Put's temporary files under root: keys hold no '.', so any file with one.
func tempFiles(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".") {
			found = append(found, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestLocal_Permissions(t *testing.T) {
	t.Parallel()
	s := newLocal(t)
	if _, err := s.Put(t.Context(), "t/d/f", bytes.NewReader([]byte("x"))); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]fs.FileMode{
		"t": blob.DirPerm, "t/d": blob.DirPerm, "t/d/f": blob.FilePerm,
	} {
		fi, err := os.Stat(filepath.Join(s.Root(), path))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}
}

func TestLocal_DeletePrunesEmptyDirectories(t *testing.T) {
	t.Parallel()
	s := newLocal(t)
	ctx := t.Context()
	for _, key := range []string{"t/a/1", "t/b/1"} {
		if _, err := s.Put(ctx, key, bytes.NewReader([]byte("x"))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, "t/a/1"); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(s.Root(), "t"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "b" {
		t.Errorf("after deleting t/a/1, t holds %v, want only b", entries)
	}
	if _, err := os.Stat(s.Root()); err != nil {
		t.Errorf("root removed: %v", err)
	}
}

// OpenReaderAt reads the object's file, large reads included.
func TestLocal_ReaderAt(t *testing.T) {
	t.Parallel()
	s := newLocal(t)
	data := blobtest.Bytes(9, 3<<20)
	if _, err := s.Put(t.Context(), "t/ra", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	ra, size, err := blob.OpenReaderAt(t.Context(), s, "t/ra")
	if err != nil {
		t.Fatal(err)
	}
	defer ra.Close()
	if size != int64(len(data)) {
		t.Fatalf("OpenReaderAt size = %d, want %d", size, len(data))
	}
	p := make([]byte, 2<<20)
	if n, err := ra.ReadAt(p, 1); n != len(p) || err != nil || !bytes.Equal(p, data[1:1+len(p)]) {
		t.Fatalf("ReadAt = %d, %v; want %d bytes of the object", n, err, len(p))
	}
}

// Put stores exactly what readers yield, whether they yield a byte at a time or data
// together with io.EOF.
func TestLocal_PutReaders(t *testing.T) {
	t.Parallel()
	s := newLocal(t)
	readers := map[string]func(io.Reader) io.Reader{
		"OneByte": iotest.OneByteReader,
		"DataErr": iotest.DataErrReader,
		"Half":    iotest.HalfReader,
	}
	for name, wrap := range readers {
		for _, size := range []int{0, 1, 4099, 100_000} {
			data := blobtest.Bytes(uint64(size), size)
			n, err := s.Put(t.Context(), "t/readers/obj", wrap(bytes.NewReader(data)))
			if err != nil || n != int64(size) {
				t.Fatalf("%s reader, %d bytes: Put = %d, %v", name, size, n, err)
			}
			got, err := os.ReadFile(filepath.Join(s.Root(), "t", "readers", "obj"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Errorf("%s reader, %d bytes: stored %d bytes that differ from what was put", name, size, len(got))
			}
		}
	}
}

// Deletes prune directories that concurrent Puts are about to use; the Puts must still work.
func TestLocal_PutDeleteRace(t *testing.T) {
	t.Parallel()
	s := newLocal(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			key := fmt.Sprintf("t/d/%d", i)
			for range 100 {
				if _, err := s.Put(t.Context(), key, bytes.NewReader([]byte("x"))); err != nil {
					errs <- err
					return
				}
				if err := s.Delete(t.Context(), key); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A Put under a key whose directories do not exist creates them, however deep.
func TestLocal_PutNewNestedKey(t *testing.T) {
	t.Parallel()
	s := newLocal(t)
	for _, key := range []string{"t/d1/a/b/c/obj", "t/d1/a/x/obj", "t/d2/obj"} {
		data := []byte(key)
		if _, err := s.Put(t.Context(), key, bytes.NewReader(data)); err != nil {
			t.Fatalf("Put(%q): %v", key, err)
		}
		got, err := os.ReadFile(filepath.Join(s.Root(), filepath.FromSlash(key)))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("after Put(%q): file holds %q, %v; want %q", key, got, err, data)
		}
	}
	for _, dir := range []string{"t", "t/d1", "t/d1/a", "t/d1/a/b", "t/d1/a/b/c", "t/d1/a/x", "t/d2"} {
		fi, err := os.Stat(filepath.Join(s.Root(), filepath.FromSlash(dir)))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != blob.DirPerm {
			t.Errorf("%s: stat = %v, %v; want a directory with mode %v", dir, fi, err, blob.DirPerm)
		}
	}
}
