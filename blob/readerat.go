package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
)

// ReadAtCloser is an io.ReaderAt that holds resources until closed.
type ReadAtCloser interface {
	io.ReaderAt
	io.Closer
}

// readerAtOpener is implemented by stores with a cheaper random-access path than ranged reads.
type readerAtOpener interface {
	openReaderAt(ctx context.Context, key string) (ReadAtCloser, int64, error)
}

// The ranged reader's cache: RangeBlockSize-byte blocks, at most rangeCacheBlocks of them
// (4 MiB per reader). Reads of rangeDirectMin bytes or more bypass the cache.
const (
	RangeBlockSize   = 256 << 10
	rangeCacheBlocks = 16
	rangeDirectMin   = 4 * RangeBlockSize
)

// OpenReaderAt opens key for random access and returns it with its size. For the local
// backend it reads the object's file. For other stores it is a reader that fetches aligned
// RangeBlockSize blocks with OpenRange (one ranged GET each on S3 and Azure) and keeps the last few in
// memory (4 MiB at most), which serves parsers that read small pieces here and there. Its
// reads use ctx, so they fail once ctx ends. It serialises concurrent ReadAt calls.
//
// For a consumer that reads the whole object many times over, copying it to a temporary
// file first (Open + io.Copy) costs less than ranged reads.
func OpenReaderAt(ctx context.Context, s Store, key string) (ReadAtCloser, int64, error) {
	if o, ok := s.(readerAtOpener); ok {
		ra, size, err := o.openReaderAt(ctx, key)
		if err != nil {
			return nil, 0, fmt.Errorf("open blob: %w", err)
		}
		return ra, size, nil
	}
	info, err := s.Stat(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	return &rangeReader{ctx: ctx, s: s, key: key, size: info.Size}, info.Size, nil
}

// rangeReader is the io.ReaderAt of OpenReaderAt over ranged reads.
type rangeReader struct {
	ctx  context.Context
	s    Store
	key  string
	size int64

	mu     sync.Mutex
	blocks []cachedBlock // least recently used first
	closed bool
}

type cachedBlock struct {
	idx  int64
	data []byte
}

// ReadAt implements io.ReaderAt.
func (r *rangeReader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return 0, os.ErrClosed
	case off < 0:
		return 0, fmt.Errorf("read blob %s: negative offset %d", r.key, off)
	case off >= r.size:
		return 0, io.EOF
	}
	want := len(p)
	if int64(want) > r.size-off {
		p = p[:r.size-off]
	}
	var n int
	var err error
	if len(p) >= rangeDirectMin {
		n, err = r.readDirect(p, off)
	} else {
		n, err = r.readBlocks(p, off)
	}
	if err == nil && n < want {
		err = io.EOF
	}
	return n, err
}

// readDirect fills p with one ranged read.
func (r *rangeReader) readDirect(p []byte, off int64) (int, error) {
	rc, err := r.s.OpenRange(r.ctx, r.key, off, int64(len(p)))
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	n, err := io.ReadFull(rc, p)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // the object shrank: it was replaced while being read
	}
	return n, err
}

// readBlocks fills p from cached blocks, fetching the missing ones.
func (r *rangeReader) readBlocks(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		b, err := r.block(pos / RangeBlockSize)
		if err != nil {
			return n, err
		}
		in := pos % RangeBlockSize
		if in >= int64(len(b)) {
			return n, io.ErrUnexpectedEOF
		}
		n += copy(p[n:], b[in:])
	}
	return n, nil
}

// block returns block idx from the cache or the store.
func (r *rangeReader) block(idx int64) ([]byte, error) {
	for i, b := range r.blocks {
		if b.idx == idx {
			r.blocks = append(slices.Delete(r.blocks, i, i+1), b)
			return b.data, nil
		}
	}
	start := idx * RangeBlockSize
	var buf []byte
	if len(r.blocks) == rangeCacheBlocks {
		buf = r.blocks[0].data[:0]
		r.blocks = slices.Delete(r.blocks, 0, 1)
	}
	size := min(RangeBlockSize, r.size-start)
	if int64(cap(buf)) < size {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	n, err := r.readDirect(buf, start)
	if err != nil {
		return nil, err
	}
	r.blocks = append(r.blocks, cachedBlock{idx: idx, data: buf[:n]})
	return buf[:n], nil
}

// Close implements io.Closer.
func (r *rangeReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.blocks = nil
	return nil
}
