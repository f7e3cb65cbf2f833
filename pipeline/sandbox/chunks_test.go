package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/pipeline/chunk"
	"github.com/docketq/docket/pipeline/extract"
)

// readAll reads every batch of chunks and closes them.
func readAll(t *testing.T, c *Chunks) ([]chunk.Chunk, [][]float32) {
	t.Helper()
	defer func() { _ = c.Close() }()
	var (
		chunks []chunk.Chunk
		vecs   [][]float32
	)
	for {
		b, err := c.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, b.Chunks...)
		vecs = append(vecs, b.Vectors...)
	}
	if len(chunks) != c.Count {
		t.Fatalf("read %d chunks, Count %d", len(chunks), c.Count)
	}
	return chunks, vecs
}

// TestProcessChunked: the child splits and embeds the text; what comes
// back, a batch at a time through a file that is gone once it is read, is
// what chunk.Split and embedding.Hashing make of the same text in this
// process, and the pages come back without their text.
func TestProcessChunked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := newPool(t, Config{Procs: 1, SpoolDir: dir})
	var text strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&text, "Sentence %d of the report, about invoices and totals. ", i)
		if i%40 == 39 {
			text.WriteString("\n\n")
		}
	}
	data := []byte(text.String())
	var progress int
	ch := Chunking{Chunk: chunk.Config{Size: 300, Progress: func(done, total int) { progress = done }}, Dimensions: 32, Batch: 10}
	res, err := p.ProcessChunked(t.Context(), extract.TypeText, bytes.NewReader(data), int64(len(data)), extract.Options{}, ch)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Doc.Pages) == 0 || res.Doc.Pages[0].Text != "" {
		t.Errorf("pages %d, first with %d bytes of text: want the pages without text", len(res.Doc.Pages), len(res.Doc.Pages[0].Text))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("spool directory holds %d files while the chunks are read, want none", len(entries))
	}
	got, vecs := readAll(t, res.Chunks)

	parsed, err := InProcess(t.Context(), extract.TypeText, bytes.NewReader(data), int64(len(data)), extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pages []chunk.Page
	for _, pg := range parsed.Doc.Pages {
		pages = append(pages, chunk.Page{Number: pg.Number, Text: pg.Text})
	}
	ch.Chunk.Progress = nil
	want, err := chunk.Split(pages, ch.Chunk)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("child's chunks differ from chunk.Split's: %d and %d", len(got), len(want))
	}
	texts := make([]string, len(want))
	for i, c := range want {
		texts[i] = c.Text
	}
	wantVecs, _ := embedding.NewHashing(32).Embed(t.Context(), texts)
	if !reflect.DeepEqual(vecs, wantVecs) {
		t.Error("child's vectors differ from embedding.Hashing's")
	}
	if progress == 0 {
		t.Error("no chunking progress relayed")
	}

	// In this process: the same chunks; vectors of the same hashing.
	res, err = InProcessChunked(t.Context(), extract.TypeText, bytes.NewReader(data), int64(len(data)), extract.Options{}, ch)
	if err != nil {
		t.Fatal(err)
	}
	inGot, inVecs := readAll(t, res.Chunks)
	if !reflect.DeepEqual(inGot, want) || !reflect.DeepEqual(inVecs, wantVecs) {
		t.Error("in-process chunks or vectors differ")
	}
	if res.Doc.Pages[0].Text == "" {
		t.Error("in process, the pages keep their text")
	}
}

// TestProcessChunked_Empty: a document with no words gives no chunks.
func TestProcessChunked_Empty(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Procs: 1})
	data := []byte(" \n\n \t ")
	res, err := p.ProcessChunked(t.Context(), extract.TypeText, bytes.NewReader(data), int64(len(data)), extract.Options{}, Chunking{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := readAll(t, res.Chunks); len(got) != 0 {
		t.Errorf("%d chunks of blank text", len(got))
	}
}

// TestSpool_Limit: a child cannot spool more than its request allows.
func TestSpool_Limit(t *testing.T) {
	t.Parallel()
	s, err := newSpool(t.TempDir(), 100)
	if err != nil {
		t.Fatal(err)
	}
	defer s.discard()
	if err := s.add(make([]byte, 50), 1); err != nil {
		t.Fatal(err)
	}
	if err := s.add(make([]byte, 50), 1); !errors.Is(err, extract.ErrTooLarge) {
		t.Fatalf("past the limit: %v, want ErrTooLarge", err)
	}
	if _, err := s.reader(3); !errors.Is(err, extract.ErrMalformed) {
		t.Fatalf("a count the batches do not add up to: %v, want ErrMalformed", err)
	}
}

// TestProcessChunked_FailsBeforeChunking: a document the parser refuses
// reports no chunking progress (the stage a failure is shown in).
func TestProcessChunked_FailsBeforeChunking(t *testing.T) {
	t.Parallel()
	chunked := false
	ch := Chunking{Chunk: chunk.Config{Progress: func(int, int) { chunked = true }}}
	data := []byte("%PDF-1.7 not really")
	if _, err := InProcessChunked(t.Context(), extract.TypePDF, bytes.NewReader(data), int64(len(data)), extract.Options{}, ch); err == nil {
		t.Fatal("a broken PDF parsed")
	}
	p := newPool(t, Config{Procs: 1})
	if _, err := p.ProcessChunked(t.Context(), extract.TypePDF, bytes.NewReader(data), int64(len(data)), extract.Options{}, ch); err == nil {
		t.Fatal("a broken PDF parsed in a child")
	}
	if chunked {
		t.Error("chunking progress reported for a document that failed to parse")
	}
}
