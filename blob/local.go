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
)

var _ Store = (*Local)(nil)

// Permissions of what the local backend creates.
const (
	DirPerm  fs.FileMode = 0o750
	FilePerm fs.FileMode = 0o640
)

// tempPattern names Put's temporary files. Keys cannot contain '.', so a temporary file
// never collides with an object.
const tempPattern = ".put-*"

// copyBufSize is the buffer the local backend copies through.
const copyBufSize = 256 << 10

// Local stores each object as a file under a root directory: key "a/b/c" is <root>/a/b/c.
// Put writes a temporary file in the target directory, fsyncs it, renames it over the target
// and fsyncs the directory, so an object is all there or not there, even after a crash.
type Local struct {
	root string
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
	if err := os.MkdirAll(abs, DirPerm); err != nil {
		return nil, fmt.Errorf("local blob store: %w", err)
	}
	return &Local{root: abs}, nil
}

// Root returns the absolute root directory.
func (l *Local) Root() string { return l.root }

// path checks key and ctx and returns the object's file name.
func (l *Local) path(ctx context.Context, key string) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return filepath.Join(l.root, filepath.FromSlash(key)), nil
}

// Put implements Store.
func (l *Local) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	name, err := l.path(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("put blob: %w", err)
	}
	dir := filepath.Dir(name)
	f, err := createTemp(dir)
	if err != nil {
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}
	n, err := writeTemp(ctx, f, r)
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}
	if err := syncDir(dir); err != nil {
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}
	return n, nil
}

// createTemp creates a temporary file in dir, creating dir first. A concurrent Delete may
// remove a directory it has just emptied between the two steps, so it retries a few times.
func createTemp(dir string) (*os.File, error) {
	var err error
	for range 5 {
		var f *os.File
		if err = os.MkdirAll(dir, DirPerm); err == nil {
			if f, err = os.CreateTemp(dir, tempPattern); err == nil {
				return f, nil
			}
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return nil, err
}

// writeTemp copies r into f, sets its permissions, fsyncs and closes it. f is closed on
// return whatever happens; the caller removes it on error.
func writeTemp(ctx context.Context, f *os.File, r io.Reader) (int64, error) {
	buf := make([]byte, copyBufSize)
	// Hide f's ReadFrom and r's WriteTo: both would bypass the context check.
	n, err := io.CopyBuffer(struct{ io.Writer }{f}, &ctxReader{ctx: ctx, r: r}, buf)
	if err == nil {
		err = f.Chmod(FilePerm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// syncDir makes a rename in dir durable.
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

// Open implements Store. The reader is an *os.File, so also an io.ReaderAt and io.Seeker.
func (l *Local) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	f, size, err := l.open(ctx, key)
	if err != nil {
		return nil, 0, fmt.Errorf("open blob: %w", err)
	}
	return f, size, nil
}

// open opens the object's file and returns it with its size.
func (l *Local) open(ctx context.Context, key string) (*os.File, int64, error) {
	name, err := l.path(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, localError(key, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fs.ErrNotExist
	}
	if err != nil {
		_ = f.Close()
		return nil, 0, localError(key, err)
	}
	return f, fi.Size(), nil
}

// OpenRange implements Store.
func (l *Local) OpenRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if off < 0 {
		return nil, fmt.Errorf("open blob %s: negative offset %d", key, off)
	}
	f, size, err := l.open(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("open blob: %w", err)
	}
	off = min(off, size)
	if n < 0 || n > size-off {
		n = size - off
	}
	return readCloser{io.NewSectionReader(f, off, n), f}, nil
}

// openReaderAt returns the object's file (see OpenReaderAt).
func (l *Local) openReaderAt(ctx context.Context, key string) (ReadAtCloser, int64, error) {
	return l.open(ctx, key)
}

// Stat implements Store.
func (l *Local) Stat(ctx context.Context, key string) (Info, error) {
	name, err := l.path(ctx, key)
	if err != nil {
		return Info{}, fmt.Errorf("stat blob: %w", err)
	}
	fi, err := os.Stat(name)
	if err == nil && !fi.Mode().IsRegular() {
		err = fs.ErrNotExist
	}
	if err != nil {
		return Info{}, fmt.Errorf("stat blob: %w", localError(key, err))
	}
	return Info{Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Delete implements Store. It also removes the directories the deletion leaves empty.
func (l *Local) Delete(ctx context.Context, key string) error {
	name, err := l.path(ctx, key)
	if err != nil {
		return fmt.Errorf("delete blob: %w", err)
	}
	fi, err := os.Lstat(name)
	if err == nil && fi.IsDir() {
		return nil // a "directory" of other keys is no object
	}
	if err == nil {
		err = os.Remove(name)
	}
	if err != nil {
		if err := localError(key, err); errors.Is(err, ErrNotFound) {
			return nil
		}
		return fmt.Errorf("delete blob %s: %w", key, err)
	}
	for dir := filepath.Dir(name); dir != l.root; dir = filepath.Dir(dir) {
		if syscall.Rmdir(dir) != nil {
			break // not empty (or already gone)
		}
	}
	return nil
}

// localError translates a file-system error about key into the package's sentinels.
func localError(key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	return fmt.Errorf("%s: %w", key, err)
}

// ctxReader reads from r until ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// readCloser pairs a reader with the closer of what it reads.
type readCloser struct {
	io.Reader
	io.Closer
}
