package blob

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"testing/iotest"
)

// syncRecorder fsyncs like syncDir and records the directories it fsynced, in order.
type syncRecorder struct{ synced []string }

func (r *syncRecorder) sync(dir string) error {
	r.synced = append(r.synced, dir)
	return syncDir(dir)
}

// take returns what was recorded since the last call.
func (r *syncRecorder) take() []string {
	s := r.synced
	r.synced = nil
	return s
}

// mkdirAllSync fsyncs the parent of each directory it creates, top down, and nothing when
// the directories exist.
func TestMkdirAllSync(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	join := func(elem ...string) string { return filepath.Join(append([]string{root}, elem...)...) }
	var rec syncRecorder
	check := func(dir string, wantSynced ...string) {
		t.Helper()
		if err := mkdirAllSync(dir, rec.sync); err != nil {
			t.Fatalf("mkdirAllSync(%s): %v", dir, err)
		}
		if got := rec.take(); !slices.Equal(got, wantSynced) {
			t.Errorf("mkdirAllSync(%s) fsynced %q, want %q", dir, got, wantSynced)
		}
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != DirPerm {
			t.Errorf("after mkdirAllSync(%s): stat = %v, %v; want a directory with mode %v", dir, fi, err, DirPerm)
		}
	}

	check(join("a", "b", "c"), root, join("a"), join("a", "b"))
	check(join("a", "b", "c")) // exists: no fsync
	check(join("a", "b"))
	check(join("a", "b", "d"), join("a", "b"))

	// A directory created but not fsynced yet (by a concurrent Put) is fsynced by whoever
	// finds it, before anything is created in it.
	setUnsynced(join("a", "b", "d"))
	check(join("a", "b", "d", "e"), join("a", "b"), join("a", "b", "d"))
	setUnsynced(join("a", "b", "d"))
	check(join("a", "b", "d"), join("a", "b"))
	check(join("a", "b", "d")) // the mark is gone

	// A failed fsync is returned and leaves the directory marked, so the next call fsyncs.
	errSync := errors.New("sync failed")
	if err := mkdirAllSync(join("x", "y"), func(string) error { return errSync }); !errors.Is(err, errSync) {
		t.Fatalf("mkdirAllSync with a failing fsync: err = %v, want %v", err, errSync)
	}
	check(join("x", "y"), root, join("x"))

	// A file in the way.
	if err := os.WriteFile(join("f"), nil, FilePerm); err != nil {
		t.Fatal(err)
	}
	if err := mkdirAllSync(join("f", "g"), rec.sync); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("mkdirAllSync under a file: err = %v, want ENOTDIR", err)
	}
}

// Put fills its buffer from readers that yield little at a time, or data together with
// io.EOF, and stores exactly what they yield, across buffer boundaries.
func TestLocal_PutReaders(t *testing.T) {
	t.Parallel()
	s, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	readers := map[string]func(io.Reader) io.Reader{
		"OneByte": iotest.OneByteReader,
		"DataErr": iotest.DataErrReader,
		"Half":    iotest.HalfReader,
		"Odd":     func(r io.Reader) io.Reader { return &oddReader{r: r} },
	}
	sizes := []int{0, 1, copyBufSize - 1, copyBufSize, copyBufSize + 1, 3*copyBufSize + 5}
	for name, wrap := range readers {
		for _, size := range sizes {
			data := make([]byte, size)
			for i := range data {
				data[i] = byte(i*7 + i>>10)
			}
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

// oddReader yields 1, 2, ..., 4999 bytes per read, round and round.
type oddReader struct {
	r    io.Reader
	next int
}

func (o *oddReader) Read(p []byte) (int, error) {
	o.next = o.next%4999 + 1
	return o.r.Read(p[:min(len(p), o.next)])
}
