package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/smithy-go"
	gcblob "gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

var _ Store = (*Bucket)(nil)

// Upload defaults. S3 requires parts of at least 5 MiB (except the last) and allows at most
// 10,000 parts, so with the default part size an object can reach about 48 GiB. A Put holds
// at most about (DefaultConcurrency+2)×DefaultPartSize in memory.
const (
	DefaultPartSize    = 5 << 20
	DefaultConcurrency = 2
)

// copyBufSize is the buffer Put copies through: what the local backend writes at once.
const copyBufSize = 256 << 10

// copyBufs holds Put's buffers.
var copyBufs = sync.Pool{New: func() any { return new([copyBufSize]byte) }}

// contentType is the type objects are stored with: the service keeps a document's type in
// its own records, and sniffing it would make the writer hold the first bytes back.
const contentType = "application/octet-stream"

// Bucket is a Store over a gocloud.dev/blob bucket; NewLocal, NewS3, NewAzure and Open
// return one. It adds to the bucket what Store promises beyond gocloud: the key rules
// (CheckKey), the package's sentinels, empty ranges past the end, idempotent deletes and
// writes aborted whenever a Put fails.
type Bucket struct {
	b *gcblob.Bucket
	// root is the directory of a local bucket (fileblob), "" for the others.
	root string
	// transfer, for S3, is the transfer manager every upload runs with (see NewS3).
	transfer *transfermanager.Client
}

// newBucket returns a Bucket over b, whose keys start with prefix+"/" if prefix is set.
func newBucket(b *gcblob.Bucket, prefix string) (*Bucket, error) {
	if prefix != "" {
		if err := CheckKey(prefix); err != nil {
			_ = b.Close()
			return nil, fmt.Errorf("prefix: %w", err)
		}
		b = gcblob.PrefixedBucket(b, prefix+"/")
	}
	return &Bucket{b: b}, nil
}

// check checks key and ctx before an operation.
func check(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	return ctx.Err()
}

// Put implements Store. It writes through a gocloud Writer whose context it cancels whenever
// the Put fails (r fails, ctx ends, a write fails): that is how gocloud aborts a write. The
// local backend then removes its temporary file, S3 aborts its multipart upload (on a
// context of its own, see NewS3) and Azure never commits the blocks it staged.
func (b *Bucket) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	if err := check(ctx, key); err != nil {
		return 0, fmt.Errorf("put blob: %w", err)
	}
	n, err := b.put(ctx, key, r)
	if err != nil {
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}
	return n, nil
}

func (b *Bucket) put(ctx context.Context, key string, r io.Reader) (int64, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var file *os.File // the local backend's temporary file
	opts := &gcblob.WriterOptions{
		ContentType:    contentType,
		BufferSize:     DefaultPartSize,
		MaxConcurrency: DefaultConcurrency,
		BeforeWrite: func(as func(any) bool) error {
			if as(&file) {
				return file.Chmod(FilePerm)
			}
			var tm *transfermanager.Client
			if b.transfer != nil && as(&tm) {
				*tm = *b.transfer
			}
			return nil
		},
	}
	w, err := b.newWriter(wctx, key, opts)
	if err != nil {
		return 0, mapError(err)
	}
	cr := &countReader{ctx: ctx, r: r}
	buf := copyBufs.Get().(*[copyBufSize]byte)
	_, err = io.CopyBuffer(writerOnly{w}, cr, buf[:])
	copyBufs.Put(buf)
	if err == nil && file != nil {
		err = file.Sync()
	}
	if err != nil {
		cancel()
		_ = w.Close()
		return 0, withCauses(mapError(err), cr.readErr(), ctx.Err())
	}
	if err := w.Close(); err != nil {
		return 0, withCauses(mapError(err), ctx.Err())
	}
	if b.root != "" {
		if err := syncDirs(b.root, b.localPath(key)); err != nil {
			return 0, err
		}
	}
	return cr.n, nil
}

// newWriter opens a writer for key. On the local backend a concurrent Delete may remove the
// directory fileblob has just created for key before it creates its temporary file there:
// newWriter then tries again, a few times.
func (b *Bucket) newWriter(ctx context.Context, key string, opts *gcblob.WriterOptions) (*gcblob.Writer, error) {
	for attempt := 1; ; attempt++ {
		w, err := b.b.NewWriter(ctx, key, opts)
		if err == nil || b.root == "" || attempt == 5 || !errors.Is(err, fs.ErrNotExist) {
			return w, err
		}
	}
}

// Open implements Store.
func (b *Bucket) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if err := check(ctx, key); err != nil {
		return nil, 0, fmt.Errorf("open blob: %w", err)
	}
	r, err := b.b.NewReader(ctx, key, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("open blob %s: %w", key, mapError(err))
	}
	return r, r.Size(), nil
}

// OpenRange implements Store with one ranged read.
func (b *Bucket) OpenRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if err := check(ctx, key); err != nil {
		return nil, fmt.Errorf("open blob: %w", err)
	}
	if off < 0 {
		return nil, fmt.Errorf("open blob %s: negative offset %d", key, off)
	}
	if n == 0 { // HTTP cannot ask for zero bytes
		if _, err := b.Stat(ctx, key); err != nil {
			return nil, err
		}
		return io.NopCloser(strings.NewReader("")), nil
	}
	r, err := b.b.NewRangeReader(ctx, key, off, n, nil)
	if err != nil {
		err = mapError(err)
		// S3 and Azure refuse a range that starts at or past the end of the object.
		if off > 0 && !errors.Is(err, ErrNotFound) {
			if info, serr := b.Stat(ctx, key); serr == nil && off >= info.Size {
				return io.NopCloser(strings.NewReader("")), nil
			}
		}
		return nil, fmt.Errorf("open blob %s: %w", key, err)
	}
	return r, nil
}

// Stat implements Store.
func (b *Bucket) Stat(ctx context.Context, key string) (Info, error) {
	if err := check(ctx, key); err != nil {
		return Info{}, fmt.Errorf("stat blob: %w", err)
	}
	a, err := b.b.Attributes(ctx, key)
	if err != nil {
		return Info{}, fmt.Errorf("stat blob %s: %w", key, mapError(err))
	}
	return Info{Size: a.Size, ModTime: a.ModTime}, nil
}

// Delete implements Store. On the local backend it also removes the directories the
// deletion leaves empty.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := check(ctx, key); err != nil {
		return fmt.Errorf("delete blob: %w", err)
	}
	if b.root != "" {
		if fi, err := os.Lstat(b.localPath(key)); err == nil && fi.IsDir() {
			return nil // a "directory" of other keys is no object
		}
	}
	if err := mapError(b.b.Delete(ctx, key)); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("delete blob %s: %w", key, err)
	}
	if b.root != "" {
		pruneDirs(b.root, b.localPath(key))
	}
	return nil
}

// mapError translates a gocloud error into the package's sentinels: a missing key (but not a
// missing bucket or container, which is a configuration error) becomes ErrNotFound, and so
// does a local key below an object.
func mapError(err error) error {
	if err == nil || missingBucket(err) {
		return err
	}
	if gcerrors.Code(err) == gcerrors.NotFound || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%w (%w)", ErrNotFound, err)
	}
	return err
}

// missingBucket reports whether err says the S3 bucket or Azure container does not exist.
func missingBucket(err error) bool {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "NoSuchBucket" {
		return true
	}
	return bloberror.HasCode(err, bloberror.ContainerNotFound)
}

// withCauses returns err joined with each non-nil cause it does not already wrap, so that a
// caller finds the reader's error (e.g. http.MaxBytesError) or the context's with errors.Is
// even where a backend reports it only as text.
func withCauses(err error, causes ...error) error {
	for _, cause := range causes {
		if cause != nil && !errors.Is(err, cause) {
			err = errors.Join(cause, err)
		}
	}
	return err
}

// readErr returns the error that ended the reads, other than io.EOF.
func (c *countReader) readErr() error {
	if errors.Is(c.err, io.EOF) {
		return nil
	}
	return c.err
}

// writerOnly hides the io.ReaderFrom of a gocloud Writer, which would copy through a
// buffer of its own.
type writerOnly struct{ io.Writer }

// countReader counts what it reads, stops when ctx ends, and remembers the first error. Its
// Read fills p, however little r yields per read (mime/multipart yields about 4 KiB), so that
// the writes downstream are few and large; it checks ctx before each read of r.
type countReader struct {
	ctx context.Context
	r   io.Reader
	n   int64
	err error
}

func (c *countReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && c.err == nil {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			break
		}
		m, err := c.r.Read(p[n:])
		n += m
		if err != nil {
			c.err = err
		}
	}
	c.n += int64(n)
	if n > 0 {
		return n, nil
	}
	return 0, c.err
}
