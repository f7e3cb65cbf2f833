package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

var _ Store = (*Local)(nil)

// Permissions of what the local backend creates.
const (
	DirPerm  fs.FileMode = 0o700
	FilePerm fs.FileMode = 0o600
)

// tempPattern names Put's temporary files. Keys cannot contain '.', so a temporary file
// never collides with an object.
const tempPattern = ".put-*"

// copyBufSize is the buffer the local backend copies through.
const copyBufSize = 256 << 10

// Local stores each object as a file under a root directory: key "a/b/c" is <root>/a/b/c.
// Put writes a temporary file in the target directory, fsyncs it, renames it over the target
// and fsyncs the directory, so an object is all there or not there, even after a crash; the
// directories it creates for a key are made durable before it writes in them.
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

// createTemp creates a temporary file in dir, creating dir first (mkdirAllSync). A concurrent
// Delete may remove a directory it has just emptied between the steps, so it retries a few
// times.
func createTemp(dir string) (*os.File, error) {
	var err error
	for range 5 {
		var f *os.File
		if err = mkdirAllSync(dir, syncDir); err == nil {
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

// unsyncedDirs holds the directories mkdirAllSync has created whose entry in their parent is
// not known to be durable yet: each is added before its mkdir and removed once its parent
// has been fsynced. It is shared by every Local of the process, as the file system is. An
// entry left behind by a failed mkdir or fsync only costs one more fsync later.
var unsyncedDirs = struct {
	sync.Mutex
	m map[string]struct{}
}{m: make(map[string]struct{})}

// mkdirAllSync creates dir and its missing parents (DirPerm), like os.MkdirAll, and makes
// each directory it creates durable: after creating a directory it calls syncParent on the
// directory's parent (syncDir; a parameter for the tests). A directory that already exists
// costs a stat, as with os.MkdirAll, and no fsync, unless this process is creating it right
// now and has not fsynced its parent yet: then this call does, so that no Put returns
// before the directory it wrote into is durable. (Another process creating the same
// directory at the same moment is not covered.)
func mkdirAllSync(dir string, syncParent func(string) error) error {
	// Walk up to the first directory that exists, collecting the missing ones.
	var missing []string
	d := dir
	for {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return &fs.PathError{Op: "mkdir", Path: d, Err: syscall.ENOTDIR}
			}
			if isUnsynced(d) {
				if err := syncCreated(d, syncParent); err != nil {
					return err
				}
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		parent := filepath.Dir(d)
		if parent == d {
			break // the root of the file system is missing: let Mkdir report it
		}
		d = parent
	}
	// Create downwards, making each new entry durable before creating the next one in it.
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		setUnsynced(d)
		if err := os.Mkdir(d, DirPerm); err != nil {
			// Tolerate a directory created meanwhile, by a concurrent Put for instance (which
			// may not have made it durable yet, so fsync its parent all the same). One
			// removed again since by a concurrent Delete is ErrNotExist, which createTemp
			// retries.
			fi, serr := os.Lstat(d)
			if serr != nil {
				return serr
			}
			if !fi.IsDir() {
				return err
			}
		}
		if err := syncCreated(d, syncParent); err != nil {
			return err
		}
	}
	return nil
}

// syncCreated calls syncParent on d's parent and, if that succeeds, marks d durable.
func syncCreated(d string, syncParent func(string) error) error {
	if err := syncParent(filepath.Dir(d)); err != nil {
		return err
	}
	unsyncedDirs.Lock()
	delete(unsyncedDirs.m, d)
	unsyncedDirs.Unlock()
	return nil
}

func setUnsynced(d string) {
	unsyncedDirs.Lock()
	unsyncedDirs.m[d] = struct{}{}
	unsyncedDirs.Unlock()
}

func isUnsynced(d string) bool {
	unsyncedDirs.Lock()
	defer unsyncedDirs.Unlock()
	_, ok := unsyncedDirs.m[d]
	return ok
}

// copyBufs holds the buffers of writeTemp.
var copyBufs = sync.Pool{New: func() any { return new([copyBufSize]byte) }}

// writeTemp copies r into f, sets its permissions, fsyncs and closes it. f is closed on
// return whatever happens; the caller removes it on error.
//
// It uses fsync, not fdatasync: for a new file fdatasync saves little, since it must flush
// the size and the block allocation anyway (they are needed to read the data back), and it
// is not required to flush the Chmod.
func writeTemp(ctx context.Context, f *os.File, r io.Reader) (int64, error) {
	buf := copyBufs.Get().(*[copyBufSize]byte)
	n, err := copyToFile(ctx, f, r, buf[:])
	copyBufs.Put(buf)
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

// copyToFile copies r into f through buf until io.EOF and returns the number of bytes
// copied. It fills buf before each write, however little r yields per read (mime/multipart
// yields about 4 KiB), so the file sees few large writes. It checks ctx before each read.
//
// It does not start the writeback early (sync_file_range every few MiB, so that the final
// fsync has less to wait for): measured with 8 concurrent 10 MB Puts, that made the median
// Put faster but the 99th percentile slower.
func copyToFile(ctx context.Context, f *os.File, r io.Reader, buf []byte) (int64, error) {
	var written int64
	for {
		n, rerr := fill(ctx, r, buf)
		eof := errors.Is(rerr, io.EOF)
		if rerr != nil && !eof {
			return written, rerr
		}
		if n > 0 {
			if _, err := f.Write(buf[:n]); err != nil {
				return written, err
			}
			written += int64(n)
		}
		if eof {
			return written, nil
		}
	}
}

// fill reads from r into buf until buf is full or r returns an error (io.EOF included),
// checking ctx before each read. It returns the number of bytes read and the error.
func fill(ctx context.Context, r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
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

// readCloser pairs a reader with the closer of what it reads.
type readCloser struct {
	io.Reader
	io.Closer
}
