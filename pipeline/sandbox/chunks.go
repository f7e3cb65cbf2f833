package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/pipeline/chunk"
	"github.com/docketq/docket/pipeline/extract"
)

// Chunking asks Process to split the document's text into chunks, and to
// compute their vectors with embedding.Hashing when Dimensions is set, where
// the parse runs: in the child, whose CPU priority, memory and time limits
// then cover that work too, and not in the caller's process, which gets the
// chunks a batch at a time from Result.Chunks and never holds the text.
type Chunking struct {
	// Chunk is the splitter's configuration. Its Progress is called in the
	// caller's process as the chunks come.
	Chunk chunk.Config
	// Dimensions, when positive, has each chunk's vector computed by
	// embedding.NewHashing(Dimensions); 0 leaves vectors to the caller.
	Dimensions int
	// Batch is how many chunks a Batch holds (default DefaultBatch).
	Batch int
}

// DefaultBatch is Chunking.Batch's default.
const DefaultBatch = 64

// Batch is consecutive chunks of a document and, when Chunking.Dimensions
// is set, their vectors (Vectors[i] is Chunks[i]'s).
type Batch struct {
	Chunks  []chunk.Chunk
	Vectors [][]float32
}

// Chunks hands a document's chunks over a batch at a time. Close it when
// done: it may hold a temporary file.
type Chunks struct {
	// Count is how many chunks the document has.
	Count int
	next  func() (*Batch, error)
	close func() error
}

// Next returns the next batch, or io.EOF after the last.
func (c *Chunks) Next() (*Batch, error) { return c.next() }

// Close releases what the chunks hold.
func (c *Chunks) Close() error {
	if c.close == nil {
		return nil
	}
	return c.close()
}

// withDefaults checks ch and fills in its defaults.
func (ch Chunking) withDefaults() (Chunking, error) {
	if ch.Batch < 0 || ch.Dimensions < 0 {
		return ch, errors.New("sandbox: negative chunk batch or dimensions")
	}
	if ch.Batch == 0 {
		ch.Batch = DefaultBatch
	}
	probe := ch.Chunk
	probe.Progress = nil // Split reports its end even with no pages
	if _, err := chunk.Split(nil, probe); err != nil {
		return ch, fmt.Errorf("sandbox: %w", err)
	}
	return ch, nil
}

// splitBatches splits pages as ch says and calls yield with each batch in
// order, its vectors computed when ch.Dimensions is set. It returns the
// number of chunks.
func splitBatches(ctx context.Context, pages []extract.Page, ch *Chunking, yield func(*Batch) error) (int, error) {
	in := make([]chunk.Page, len(pages))
	for i, p := range pages {
		in[i] = chunk.Page{Number: p.Number, Text: p.Text}
	}
	chunks, err := chunk.Split(in, ch.Chunk)
	if err != nil {
		return 0, fmt.Errorf("chunk: %w", err)
	}
	var hashing *embedding.Hashing
	if ch.Dimensions > 0 {
		hashing = embedding.NewHashing(ch.Dimensions)
	}
	texts := make([]string, 0, ch.Batch)
	for start := 0; start < len(chunks); start += ch.Batch {
		b := &Batch{Chunks: chunks[start:min(start+ch.Batch, len(chunks))]}
		if hashing != nil {
			texts = texts[:0]
			for _, c := range b.Chunks {
				texts = append(texts, c.Text)
			}
			if b.Vectors, err = hashing.Embed(ctx, texts); err != nil {
				return 0, fmt.Errorf("embed: %w", err)
			}
		}
		if err := yield(b); err != nil {
			return 0, err
		}
	}
	return len(chunks), nil
}

// inMemory returns pages's chunks, split and embedded a batch at a time
// as they are read: what a document parsed in this process gets.
func inMemory(ctx context.Context, pages []extract.Page, ch *Chunking) (*Chunks, error) {
	var batches []*Batch
	n, err := splitBatches(ctx, pages, &Chunking{Chunk: ch.Chunk, Batch: ch.Batch}, func(b *Batch) error {
		batches = append(batches, b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var hashing *embedding.Hashing
	if ch.Dimensions > 0 {
		hashing = embedding.NewHashing(ch.Dimensions)
	}
	next := func() (*Batch, error) {
		if len(batches) == 0 {
			return nil, io.EOF
		}
		b := batches[0]
		batches[0], batches = nil, batches[1:]
		if hashing != nil {
			texts := make([]string, len(b.Chunks))
			for i, c := range b.Chunks {
				texts[i] = c.Text
			}
			v, err := hashing.Embed(ctx, texts)
			if err != nil {
				return nil, fmt.Errorf("embed: %w", err)
			}
			b.Vectors = v
		}
		return b, nil
	}
	return &Chunks{Count: n, next: next}, nil
}

// noChunks is the chunks of a document without text.
func noChunks() *Chunks {
	return &Chunks{next: func() (*Batch, error) { return nil, io.EOF }}
}

// encodeBatch is a batch's wire and spool form: a gob stream of its own,
// so that the parent stores it as it comes, without decoding it.
func encodeBatch(b *Batch) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeBatch(p []byte) (*Batch, error) {
	var b Batch
	if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&b); err != nil {
		return nil, fmt.Errorf("sandbox: chunk batch: %w", err)
	}
	if b.Vectors != nil && len(b.Vectors) != len(b.Chunks) {
		return nil, fmt.Errorf("sandbox: %d vectors for %d chunks: %w", len(b.Vectors), len(b.Chunks), extract.ErrMalformed)
	}
	return &b, nil
}

// spool keeps the encoded batches a child sends in a temporary file, each
// behind its length, so that the caller's memory holds one batch at a time
// and the child (and its slot) is free once it has sent them.
type spool struct {
	f     *os.File
	w     *bufio.Writer
	size  int64 // bytes written
	limit int64 // most bytes it may hold
	sent  int   // chunks
}

func newSpool(dir string, limit int64) (*spool, error) {
	f, err := os.CreateTemp(dir, "docket-chunks-*")
	if err != nil {
		return nil, fmt.Errorf("sandbox: chunk spool: %w", err)
	}
	return &spool{f: f, w: bufio.NewWriterSize(f, 256<<10), limit: limit}, nil
}

// add stores one encoded batch of n chunks.
func (s *spool) add(p []byte, n int) error {
	if s.size+int64(len(p))+binary.MaxVarintLen64 > s.limit {
		return fmt.Errorf("sandbox: the chunks exceed %d bytes: %w", s.limit, extract.ErrTooLarge)
	}
	var hdr [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(len(p)))
	if _, err := s.w.Write(hdr[:h]); err != nil {
		return fmt.Errorf("sandbox: chunk spool: %w", err)
	}
	if _, err := s.w.Write(p); err != nil {
		return fmt.Errorf("sandbox: chunk spool: %w", err)
	}
	s.size += int64(h + len(p))
	s.sent += n
	return nil
}

// discard removes the spool's file.
func (s *spool) discard() {
	_ = s.f.Close()
	_ = os.Remove(s.f.Name())
}

// reader returns the spooled batches for reading, count chunks in all
// (the child's word, checked against what came). The file is removed at
// once (it stays readable while open), so that nothing is left behind
// whatever happens to this process.
func (s *spool) reader(count int) (*Chunks, error) {
	if count != s.sent {
		s.discard()
		return nil, fmt.Errorf("sandbox: child announced %d chunks and sent %d: %w", count, s.sent, extract.ErrMalformed)
	}
	if err := s.w.Flush(); err != nil {
		s.discard()
		return nil, fmt.Errorf("sandbox: chunk spool: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		s.discard()
		return nil, fmt.Errorf("sandbox: chunk spool: %w", err)
	}
	_ = os.Remove(s.f.Name())
	r := bufio.NewReaderSize(s.f, 256<<10)
	var buf []byte
	next := func() (*Batch, error) {
		n, err := binary.ReadUvarint(r)
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		if err != nil {
			return nil, fmt.Errorf("sandbox: chunk spool: %w", err)
		}
		if n > uint64(s.limit) {
			return nil, fmt.Errorf("sandbox: chunk spool: a batch of %d bytes", n)
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, fmt.Errorf("sandbox: chunk spool: %w", err)
		}
		return decodeBatch(buf)
	}
	return &Chunks{Count: count, next: next, close: s.f.Close}, nil
}
