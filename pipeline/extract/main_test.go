package extract_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// update rewrites the golden files and fuzz seeds instead of comparing against them.
var update = flag.Bool("update", false, "rewrite testdata/golden and testdata/fuzz seeds")

// engine is the PDF engine every test shares: compiling PDFium costs seconds (tens under
// -race) on a cold compilation cache, so it is paid once per process.
var engine *extract.PDFEngine

// instances is the shared engine's pool, and the most tests this package
// runs at once: a parse waits for an instance, and with more tests at once
// the deadline tests (150-200 ms) spent their deadline waiting for one
// rather than in PDFium.
const instances = 2

func TestMain(m *testing.M) {
	flag.Parse()
	if n, err := strconv.Atoi(flag.Lookup("test.parallel").Value.String()); err == nil && n > instances {
		_ = flag.Set("test.parallel", strconv.Itoa(instances))
	}
	before := goleak.IgnoreCurrent()
	var err error
	cfg := extract.PDFConfig{Instances: instances, MemoryLimit: 256 << 20}
	if os.Getenv(xt.ChildEnv) != "" {
		// A bomb measured alone runs with the production settings, at the tier's size.
		cfg = extract.PDFConfig{MemoryLimit: xt.BombPDFMemoryLimit}
	}
	engine, err = extract.NewPDFEngine(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pdf engine:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := closeOCREngine(); err != nil {
		fmt.Fprintln(os.Stderr, "close OCR engine:", err)
		code = 1
	}
	if err := engine.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close engine:", err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(before); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// extractBytes runs Extract on data with the shared engine and opts.
func extractBytes(t testing.TB, typ extract.Type, data []byte, opts extract.Options) (*extract.Document, error) {
	t.Helper()
	if opts.PDF == nil {
		opts.PDF = engine
	}
	return extract.Extract(context.Background(), typ, bytes.NewReader(data), int64(len(data)), opts)
}

// within fails t when f takes longer than d, and returns f's duration.
func within(t *testing.T, d time.Duration, f func()) time.Duration {
	t.Helper()
	start := time.Now()
	f()
	took := time.Since(start)
	if took > d {
		t.Errorf("took %v, want under %v", took, d)
	}
	return took
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r interface {
		ReadAt([]byte, int64) (int, error)
	}
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}
