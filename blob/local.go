package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	gcblob "gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
)

// Permissions of what the local backend creates.
const (
	DirPerm  fs.FileMode = 0o700
	FilePerm fs.FileMode = 0o600
)

// Local is a Bucket in a local directory (gocloud's fileblob): key "a/b/c" is the file
// <root>/a/b/c. Put writes a temporary file next to the object ("<name>.<hex>.tmp": keys
// cannot hold a '.', so it never collides with an object), fsyncs it, renames it over the
// object and fsyncs every directory from the object's up to the root, so that the object and
// any directory created for it are durable when Put returns.
type Local struct {
	*Bucket
}

// NewLocal returns a Local store rooted at dir, creating the directory (DirPerm) if needed.
func NewLocal(dir string) (*Local, error) {
	if dir == "" {
		return nil, errors.New("local blob store: empty directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("local blob store: %w", err)
	}
	b, err := fileblob.OpenBucket(abs, &fileblob.Options{
		CreateDir:   true,
		DirFileMode: DirPerm,
		NoTempDir:   true, // a rename across file systems would fail
		Metadata:    fileblob.MetadataDontWrite,
	})
	if err != nil {
		return nil, fmt.Errorf("local blob store: %w", err)
	}
	return &Local{&Bucket{b: b, root: abs}}, nil
}

// Root returns the absolute root directory.
func (l *Local) Root() string { return l.root }

// localPath returns the file name of key in a local bucket.
func (b *Bucket) localPath(key string) string {
	return filepath.Join(b.root, filepath.FromSlash(key))
}

// openReaderAt returns the object's file (see OpenReaderAt).
func (l *Local) openReaderAt(ctx context.Context, key string) (ReadAtCloser, int64, error) {
	if err := check(ctx, key); err != nil {
		return nil, 0, err
	}
	var f *os.File
	r, err := l.b.NewReader(ctx, key, &gcblob.ReaderOptions{
		BeforeRead: func(as func(any) bool) error {
			as(&f)
			return nil
		},
	})
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", key, mapError(err))
	}
	if f == nil {
		_ = r.Close()
		return nil, 0, fmt.Errorf("%s: the local bucket read no file", key)
	}
	return readAtCloser{f, r}, r.Size(), nil
}

// readAtCloser pairs a file's ReadAt with the Close of the reader that opened it.
type readAtCloser struct {
	io.ReaderAt
	io.Closer
}

// syncDirs fsyncs every directory from name's up to root: that makes name's entry durable,
// and the entries of the directories a Put created for it, or that another Put has just
// created and not fsynced yet.
func syncDirs(root, name string) error {
	for dir := filepath.Dir(name); ; dir = filepath.Dir(dir) {
		if err := syncDir(dir); err != nil {
			return err
		}
		if dir == root || dir == filepath.Dir(dir) {
			return nil
		}
	}
}

// syncDir fsyncs directory dir: it makes the entries created, renamed or removed in it
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// pruneDirs removes the directories between name and root that are empty.
func pruneDirs(root, name string) {
	for dir := filepath.Dir(name); dir != root && len(dir) > len(root); dir = filepath.Dir(dir) {
		if syscall.Rmdir(dir) != nil {
			return // not empty (or already gone)
		}
	}
}
