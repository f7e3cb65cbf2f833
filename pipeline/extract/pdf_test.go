package extract_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// TestExtract_PDFDeadlineKillsStuckCall parses a PDF that keeps PDFium busy for seconds with a
// deadline of 200 ms: the call is killed, its instance replaced, and the engine goes on.
func TestExtract_PDFDeadlineKillsStuckCall(t *testing.T) {
	t.Parallel()
	slow := xt.SlowPDF().Bytes()
	kills := engine.Kills()
	var err error
	// ErrTimeout and the kill count below prove the call was killed; the
	// bound only catches a hang (on a loaded CI run 200 ms took 9.8 s).
	within(t, 30*time.Second, func() {
		_, err = extractBytes(t, extract.TypePDF, slow, extract.Options{Timeout: 200 * time.Millisecond})
	})
	if !errors.Is(err, extract.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if engine.Kills() <= kills {
		t.Error("no instance was killed")
	}
	doc, err := extractBytes(t, extract.TypePDF, xt.ProsePDF(1).Bytes(), extract.Options{})
	if err != nil || len(doc.Pages) != 1 {
		t.Fatalf("after the kill: %v", err)
	}
}

// TestExtract_PDFContextDeadline: a caller's deadline that passes while PDFium parses ends the
// parse with ErrTimeout. The parse has a budget of its own, so the deadline cannot pass while it
// waits behind the other tests' parses (that is a retryable context error, not a timeout).
func TestExtract_PDFContextDeadline(t *testing.T) {
	t.Parallel()
	data := xt.SlowPDF().Bytes()
	budget := extract.NewBudget(extract.BudgetConfig{Bytes: extract.Cost(extract.TypePDF, int64(len(data)), extract.Options{PDF: engine})})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err := extract.Extract(ctx, extract.TypePDF, bytesReader(data), int64(len(data)), extract.Options{PDF: engine, Budget: budget})
	if !errors.Is(err, extract.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestExtract_PDFCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	data := xt.ProsePDF(1).Bytes()
	_, err := extract.Extract(ctx, extract.TypePDF, bytesReader(data), int64(len(data)), extract.Options{PDF: engine})
	if !errors.Is(err, context.Canceled) || extract.Permanent(err) {
		t.Fatalf("err = %v, want a retryable context.Canceled", err)
	}
}

func TestExtract_PDFProgress(t *testing.T) {
	t.Parallel()
	var calls [][2]int
	var returned atomic.Bool
	doc, err := extractBytes(t, extract.TypePDF, xt.ProsePDF(5).Bytes(), extract.Options{Progress: func(done, total int) {
		if returned.Load() {
			t.Error("progress after Extract returned")
		}
		calls = append(calls, [2]int{done, total})
	}})
	returned.Store(true)
	if err != nil || len(doc.Pages) != 5 {
		t.Fatalf("Extract: %v", err)
	}
	want := [][2]int{{1, 5}, {2, 5}, {3, 5}, {4, 5}, {5, 5}}
	if !slices.Equal(calls, want) {
		t.Fatalf("progress %v, want %v", calls, want)
	}
}

func TestExtract_PDFLimits(t *testing.T) {
	t.Parallel()
	data := xt.ProsePDF(4).Bytes()
	if _, err := extractBytes(t, extract.TypePDF, data, extract.Options{MaxPages: 3}); !errors.Is(err, extract.ErrTooLarge) {
		t.Errorf("4 pages, MaxPages 3: %v", err)
	}
	if _, err := extractBytes(t, extract.TypePDF, data, extract.Options{MaxBytes: 100}); !errors.Is(err, extract.ErrTooLarge) {
		t.Errorf("MaxBytes 100: %v", err)
	}
	if _, err := extractBytes(t, extract.TypePDF, data, extract.Options{MaxTextLength: 500}); !errors.Is(err, extract.ErrTooLarge) {
		t.Errorf("MaxTextLength 500: %v", err)
	}
	if _, err := extractBytes(t, extract.TypePDF, []byte("<html>not a pdf</html>\n%%EOF"), extract.Options{}); !errors.Is(err, extract.ErrMalformed) {
		t.Errorf("HTML as PDF: %v", err)
	}
}

// TestPDFEngine_MemoryLimit parses a FlateDecode bomb in an engine capped at 64 MiB: the
// instance may not grow past it, and the parse ends as a controlled failure (or PDFium gives up
// on the stream and finds no text).
func TestPDFEngine_MemoryLimit(t *testing.T) {
	t.Parallel()
	small, err := extract.NewPDFEngine(extract.PDFConfig{Instances: 1, MemoryLimit: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	data := xt.FlateBombPDF(1 << 30)
	doc, err := extractBytes(t, extract.TypePDF, data, extract.Options{PDF: small, Timeout: 8 * time.Second})
	switch {
	case err == nil:
		t.Logf("parsed, warnings %q", doc.Warnings)
	case extract.Permanent(err):
		t.Logf("controlled failure: %v", err)
	default:
		t.Fatalf("err = %v", err)
	}
	// The engine still works after whatever happened.
	if _, err := extractBytes(t, extract.TypePDF, xt.ProsePDF(1).Bytes(), extract.Options{PDF: small}); err != nil {
		t.Fatalf("after the bomb: %v", err)
	}
}

func TestPDFEngine_CloseTwice(t *testing.T) {
	t.Parallel()
	e, err := extract.NewPDFEngine(extract.PDFConfig{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPDFEngine_CallsImplementation guards the kill switch against a go-pdfium upgrade that
// takes the calls the engine uses off an instance's implementation: calls through the instance
// itself race with a kill at the deadline.
func TestPDFEngine_CallsImplementation(t *testing.T) {
	t.Parallel()
	ok, err := extract.EngineCallsImplementation(engine)
	if err != nil || !ok {
		t.Fatalf("calls through the implementation: %v, %v", ok, err)
	}
}

// Reused instances keep their memory between documents, through a kill, until Close.
func TestPDFEngine_ReuseInstances(t *testing.T) {
	t.Parallel()
	e, err := extract.NewPDFEngine(extract.PDFConfig{Instances: 1, ReuseInstances: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	prose := xt.ProsePDF(2).Bytes()
	for i := range 3 {
		if doc, err := extractBytes(t, extract.TypePDF, prose, extract.Options{PDF: e}); err != nil || len(doc.Pages) != 2 {
			t.Fatalf("document %d: %v", i, err)
		}
	}
	if _, err := extractBytes(t, extract.TypePDF, xt.SlowPDF().Bytes(), extract.Options{PDF: e, Timeout: 200 * time.Millisecond}); !errors.Is(err, extract.ErrTimeout) {
		t.Fatalf("slow document: %v, want ErrTimeout", err)
	}
	if doc, err := extractBytes(t, extract.TypePDF, prose, extract.Options{PDF: e}); err != nil || len(doc.Pages) != 2 {
		t.Fatalf("after the kill: %v", err)
	}
}

// TestExtract_PDFTruncatedMessage: a PDF cut before its end-of-file marker is malformed, and the
// error says so in words rather than with a doubled percent sign.
func TestExtract_PDFTruncatedMessage(t *testing.T) {
	t.Parallel()
	data := xt.ProsePDF(1).Bytes()
	_, err := extractBytes(t, extract.TypePDF, data[:len(data)/2], extract.Options{})
	if !errors.Is(err, extract.ErrMalformed) {
		t.Fatalf("truncated PDF: %v, want ErrMalformed", err)
	}
	if msg := err.Error(); strings.Contains(msg, "%%") || !strings.Contains(msg, "no end-of-file marker") {
		t.Errorf("truncated PDF: %q, want it to say there is no end-of-file marker", msg)
	}
}
