package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/pipeline/chunk"
	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
	"github.com/docketq/docket/pipeline/sandbox"
	"github.com/docketq/docket/queue"
)

// rangeChunking makes a chunk of each of ProsePDF's pages (about 3,200
// runes, its paragraphs not separated by blank lines: a page's end is the
// only paragraph break), none across pages and without overlap: the
// chunks of a workflow's ranges are then those of the whole document.
var rangeChunking = chunk.Config{Size: 4000, Overlap: -1}

// The workflow tests' document: 7 pages in ranges of 2.
const (
	rangePages = 2
	pdfPages   = 7
)

// wantRanges are the ranges of the test document, in order.
var wantRanges = []extract.PageRange{{First: 1, Last: 2}, {First: 3, Last: 4}, {First: 5, Last: 6}, {First: 7, Last: 7}}

// parseCounter counts the parses of each page range; block, when set,
// holds the first parse of its range until released.
type parseCounter struct {
	mu     sync.Mutex
	counts map[extract.PageRange]int
	hook   func(r extract.PageRange, n int) error // n: the parses of r so far, this one included
}

func (c *parseCounter) parse(r extract.PageRange) error {
	c.mu.Lock()
	if c.counts == nil {
		c.counts = map[extract.PageRange]int{}
	}
	c.counts[r]++
	n, hook := c.counts[r], c.hook
	c.mu.Unlock()
	if hook != nil {
		return hook(r, n)
	}
	return nil
}

// total returns the parses so far, of every range.
func (c *parseCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.counts {
		n += k
	}
	return n
}

// want fails t unless every range of wantRanges was parsed once, except
// those in again, parsed twice, and nothing else was parsed.
func (c *parseCounter) want(t *testing.T, again ...extract.PageRange) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	want := map[extract.PageRange]int{}
	for _, r := range wantRanges {
		want[r] = 1
	}
	for _, r := range again {
		want[r] = 2
	}
	if !maps.Equal(c.counts, want) {
		t.Errorf("parses %v, want %v", c.counts, want)
	}
}

// rangeConfig is the processor's config of the workflow tests, its parses
// counted by c.
func rangeConfig(c *parseCounter) pipeline.Config {
	return pipeline.WithParseHook(pipeline.Config{Chunk: rangeChunking, SaveBatch: 1, RangePages: rangePages}, c.parse)
}

// wantSteps fails t unless job's steps are the document's ranges, in
// order, completed.
func (e *env) wantSteps(t *testing.T, job int64) []*queue.Job {
	t.Helper()
	steps, err := e.client.Children(e.ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range steps {
		names = append(names, s.StepName())
		if s.State != queue.StateCompleted || s.Kind != pipeline.RangeKind {
			t.Errorf("step %s: %s %s: %s", s.StepName(), s.Kind, s.State, s.ErrorMessage)
		}
	}
	want := []string{"pages-0001-0002", "pages-0003-0004", "pages-0005-0006", "pages-0007-0007"}
	if !slices.Equal(names, want) {
		t.Errorf("steps %v, want %v", names, want)
	}
	return steps
}

// wantLikeOneJob fails t unless the document docID of e has the chunks
// (text and pages, in order) and fields of one processed as one job.
func wantLikeOneJob(t *testing.T, e *env, docID string, one *env, oneID string) {
	t.Helper()
	doc, chunks := e.document(tenantA, docID)
	wdoc, wchunks := one.document(tenantA, oneID)
	if len(chunks) != len(wchunks) || len(chunks) != pdfPages {
		t.Fatalf("%d chunks, one job %d", len(chunks), len(wchunks))
	}
	for i, c := range chunks {
		w := wchunks[i]
		if c.Text != w.Text || c.PageStart != w.PageStart || c.PageEnd != w.PageEnd {
			t.Errorf("chunk %d (index %d): pages %d-%d %.50q; one job: pages %d-%d %.50q",
				i, c.Index, c.PageStart, c.PageEnd, c.Text, w.PageStart, w.PageEnd, w.Text)
		}
	}
	f, w := doc.Fields, wdoc.Fields
	if f == nil || w == nil {
		t.Fatalf("fields %+v, one job %+v", f, w)
	}
	if f.Title != w.Title || f.Language != w.Language || f.PageCount != pdfPages || f.PageCount != w.PageCount ||
		f.WordCount != w.WordCount || f.ChunkCount != len(chunks) || f.EmbeddingDimensions != w.EmbeddingDimensions {
		t.Errorf("fields %+v\none job %+v", f, w)
	}
	if len(f.KeyPhrases) == 0 {
		t.Error("no key phrases")
	}
	for _, l := range [][2]any{{f.Dates, w.Dates}, {f.Amounts, w.Amounts}} { // [] and null differ in JSON
		got, _ := json.Marshal(l[0])
		want, _ := json.Marshal(l[1])
		if !bytes.Equal(got, want) {
			t.Errorf("fields have %s, one job %s", got, want)
		}
	}
	if !slices.Equal(doc.Warnings, wdoc.Warnings) {
		t.Errorf("warnings %q, one job %q", doc.Warnings, wdoc.Warnings)
	}
}

// processOne processes data as one job in a fresh env of backend.
func processOne(t *testing.T, backend string, data []byte) (*env, string) {
	t.Helper()
	one := setup(t, backend, pipeline.Config{Chunk: rangeChunking, SaveBatch: 1})
	id, job := one.upload(tenantA, extract.TypePDF, data)
	if j := one.wait(job); j.State != queue.StateCompleted {
		t.Fatalf("one job: %s: %s", j.State, j.ErrorMessage)
	}
	if steps, err := one.client.Children(one.ctx, job); err != nil || len(steps) != 0 {
		t.Fatalf("one job has steps: %v, %v", steps, err)
	}
	return one, id
}

// TestProcessor_Ranges: a PDF of more than RangePages pages is a workflow
// of a step per range, each parsed once, and ends with the chunks and
// fields of one job; a PDF of RangePages pages is one job.
func TestProcessor_Ranges(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		data := xt.ProsePDF(pdfPages).Bytes()
		var parses parseCounter
		e := setup(t, backend, rangeConfig(&parses))
		docID, job := e.upload(tenantA, extract.TypePDF, data)
		if j := e.wait(job); j.State != queue.StateCompleted {
			t.Fatalf("job %s: %s", j.State, j.ErrorMessage)
		}
		e.wantSteps(t, job)
		parses.want(t)
		one, oneID := processOne(t, backend, data)
		wantLikeOneJob(t, e, docID, one, oneID)

		// A PDF of RangePages pages is parsed once: its first range is the
		// whole of it.
		before := parses.total()
		short := xt.ProsePDF(rangePages).Bytes()
		_, job = e.upload(tenantA, extract.TypePDF, short)
		if j := e.wait(job); j.State != queue.StateCompleted {
			t.Fatalf("short: %s: %s", j.State, j.ErrorMessage)
		}
		if steps, err := e.client.Children(e.ctx, job); err != nil || len(steps) != 0 {
			t.Fatalf("a PDF of RangePages pages has steps: %v, %v", steps, err)
		}
		if n := parses.total() - before; n != 1 {
			t.Errorf("the short PDF was parsed %d times, want once", n)
		}
	})
}

// TestProcessor_RangesSandbox: the steps parse their ranges in the
// sandbox's children, with the same chunks as one job in process.
func TestProcessor_RangesSandbox(t *testing.T) {
	t.Parallel()
	data := xt.ProsePDF(pdfPages).Bytes()
	var parses parseCounter
	cfg := rangeConfig(&parses)
	cfg.Sandbox = newSandbox(t, sandbox.Config{Procs: 1})
	e := setup(t, "sqlite", cfg)
	docID, job := e.upload(tenantA, extract.TypePDF, data)
	if j := e.wait(job); j.State != queue.StateCompleted {
		t.Fatalf("job %s: %s", j.State, j.ErrorMessage)
	}
	e.wantSteps(t, job)
	parses.want(t)
	one, oneID := processOne(t, "sqlite", data)
	wantLikeOneJob(t, e, docID, one, oneID)
}

// TestProcessor_RangeLeaseLost: a step whose worker stops mid-range, its
// handler stuck past the shutdown (the worker gives its lease up; the
// handler, released later, goes on with a cancelled context), is parsed
// again by the next worker; every other range is parsed once, and the
// document ends as one job's.
func TestProcessor_RangeLeaseLost(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		data := xt.ProsePDF(pdfPages).Bytes()
		stuck := wantRanges[1]
		entered, release := make(chan struct{}), make(chan struct{})
		parses := &parseCounter{hook: func(r extract.PageRange, n int) error {
			if r == stuck && n == 1 {
				close(entered)
				<-release // ignores the cancellation: the worker gives the job up
			}
			return nil
		}}
		defer func() {
			select {
			case <-release:
			default:
				close(release)
			}
		}()
		e, cfg := setupStore(t, backend, rangeConfig(parses))
		// The stuck step and the others at once.
		if err := e.client.SetTenantLimit(e.ctx, tenantA, pipeline.Queue, 2); err != nil {
			t.Fatal(err)
		}
		stop := e.startWorkerWith(cfg, func(w *queue.WorkerConfig) {
			w.ShutdownGrace, w.HeartbeatInterval, w.LeaseDuration = time.Millisecond, 100*time.Millisecond, 2*time.Second
		})
		docID, job := e.upload(tenantA, extract.TypePDF, data)
		select {
		case <-entered:
		case <-time.After(waitLimit):
			t.Fatal("the stuck range's parse did not start")
		}
		e.waitSteps(job, func(steps []*queue.Job) bool { // every other step done: only the stuck one is stopped
			n := 0
			for _, s := range steps {
				if s.State == queue.StateCompleted {
					n++
				}
			}
			return n == len(wantRanges)-1
		})
		if j, err := e.client.Get(e.ctx, job); err != nil || j.State != queue.StateWaiting {
			t.Fatalf("document job %v while its steps run: %v", j, err)
		}
		if doc, _ := e.document(tenantA, docID); doc.Status != docket.StatusProcessing {
			t.Errorf("document %s while its steps run, want processing", doc.Status)
		}
		stop()
		close(release) // its handler goes on, with a lost lease
		e.startWorker(cfg)
		if j := e.wait(job); j.State != queue.StateCompleted {
			t.Fatalf("job %s: %s", j.State, j.ErrorMessage)
		}
		steps := e.wantSteps(t, job)
		if s := steps[1]; s.Attempt != 1 {
			t.Errorf("the stuck step completed in attempt %d, want 1 (released, no attempt spent)", s.Attempt)
		}
		parses.want(t, stuck)
		one, oneID := processOne(t, backend, data)
		wantLikeOneJob(t, e, docID, one, oneID)
	})
}

// TestProcessor_RangeFailsDocument: a step that fails for good fails its
// document with the step's reason; a retry of the document's job runs that
// step alone again, and the document completes.
func TestProcessor_RangeFailsDocument(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		data := xt.ProsePDF(pdfPages).Bytes()
		bad := wantRanges[2]
		parses := &parseCounter{hook: func(r extract.PageRange, n int) error {
			if r == bad && n == 1 {
				return queue.Permanent(errors.New("rejected_input: malformed: injected"))
			}
			return nil
		}}
		e := setup(t, backend, rangeConfig(parses))
		docID, job := e.upload(tenantA, extract.TypePDF, data)
		j := e.wait(job)
		if j.State != queue.StateFailed || !strings.HasPrefix(j.ErrorMessage, "rejected_input: malformed: injected") ||
			!strings.Contains(j.ErrorMessage, "pages-0005-0006") {
			t.Fatalf("job %s: %q", j.State, j.ErrorMessage)
		}
		doc, _ := e.document(tenantA, docID)
		if doc.Status != "failed" || doc.Fields != nil {
			t.Fatalf("document %s, fields %+v", doc.Status, doc.Fields)
		}
		if _, err := e.client.Retry(e.ctx, job, tenantA); err != nil {
			t.Fatal(err)
		}
		if j := e.wait(job); j.State != queue.StateCompleted {
			t.Fatalf("retried: %s: %s", j.State, j.ErrorMessage)
		}
		e.wantSteps(t, job)
		parses.want(t, bad)
		one, oneID := processOne(t, backend, data)
		wantLikeOneJob(t, e, docID, one, oneID)
	})
}

// waitSteps polls job's steps until done holds of them, within waitLimit.
func (e *env) waitSteps(job int64, done func([]*queue.Job) bool) {
	e.tb.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		steps, err := e.client.Children(e.ctx, job)
		if err != nil {
			e.tb.Fatal(err)
		}
		if done(steps) {
			return
		}
		if time.Now().After(deadline) {
			var states []string
			for _, s := range steps {
				states = append(states, fmt.Sprintf("%s %s", s.StepName(), s.State))
			}
			e.tb.Fatalf("steps %v after %s", states, waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestProcessor_RangeRetriedAfterSave: a step whose attempt fails after
// saving a batch of its chunks (the embedding service fails on its second
// page) is retried; the retry replaces the range's chunks, no other
// range is parsed again, and the document ends as one job's.
func TestProcessor_RangeRetriedAfterSave(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		data := xt.ProsePDF(pdfPages).Bytes()
		var failed atomic.Bool
		var parses parseCounter
		cfg := rangeConfig(&parses)
		cfg.Embedder = embedFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
			if strings.Contains(strings.Join(texts, " "), "Page 4 of 7") && failed.CompareAndSwap(false, true) {
				return nil, errors.New("embedding service unavailable")
			}
			return hashing.Embed(ctx, texts)
		})
		e := setup(t, backend, cfg)
		docID, job := e.upload(tenantA, extract.TypePDF, data)
		if j := e.wait(job); j.State != queue.StateCompleted {
			t.Fatalf("job %s: %s", j.State, j.ErrorMessage)
		}
		steps := e.wantSteps(t, job)
		if !failed.Load() || steps[1].Attempt != 2 {
			t.Errorf("the failing step completed in attempt %d (failed: %v), want 2", steps[1].Attempt, failed.Load())
		}
		parses.want(t, wantRanges[1])
		one, oneID := processOne(t, backend, data)
		wantLikeOneJob(t, e, docID, one, oneID)
	})
}
