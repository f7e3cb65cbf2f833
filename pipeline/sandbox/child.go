package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/docketq/docket/pipeline/analyze"
	"github.com/docketq/docket/pipeline/extract"
)

// The child's environment: envChild marks the process as a child,
// envMemory carries Config.MemoryLimit.
const (
	envChild  = "DOCKET_SANDBOX_CHILD"
	envMemory = "DOCKET_SANDBOX_MEMORY_LIMIT"
)

// Main runs the sandbox child when this process is one, and exits; in any
// other process it returns at once. Call it first thing in main (and in
// TestMain of tests that use a Pool), before flags are parsed.
func Main() {
	if os.Getenv(envChild) != "1" {
		return
	}
	os.Exit(runChild(os.Stdin, os.Stdout, os.Stderr))
}

// Exit codes of a child that stopped on its own.
const (
	exitOK       = 0
	exitSetup    = 3 // the limits could not be applied
	exitProtocol = 4 // the parent sent something unexpected, or went away
)

// ready is the child's first message: its limits are in place.
type ready struct{ PID int }

// runChild serves documents read from in until in ends.
func runChild(in io.Reader, out io.Writer, errOut io.Writer) int {
	limit, err := strconv.ParseInt(os.Getenv(envMemory), 10, 64)
	if err == nil {
		err = limitMemory(limit)
	}
	if err != nil {
		fmt.Fprintln(errOut, "sandbox child: limits:", err)
		return exitSetup
	}
	bw := bufio.NewWriter(out)
	enc := gob.NewEncoder(bw)
	send := func(m *message) error {
		if err := enc.Encode(m); err != nil {
			return err
		}
		return bw.Flush()
	}
	if err := send(&message{Ready: &ready{PID: os.Getpid()}}); err != nil {
		return exitProtocol
	}
	c := &child{dec: gob.NewDecoder(bufio.NewReader(in)), send: send}
	defer c.close()
	for {
		var req request
		switch err := c.dec.Decode(&req); {
		case errors.Is(err, io.EOF):
			return exitOK
		case err != nil:
			fmt.Fprintln(errOut, "sandbox child: request:", err)
			return exitProtocol
		}
		res, err := c.serve(&req)
		if err != nil {
			fmt.Fprintln(errOut, "sandbox child:", err)
			return exitProtocol
		}
		res.Grown = grown()
		if err := sendResult(send, res); err != nil {
			return exitProtocol
		}
	}
}

// sendResult sends res: its pages' text in pieces, then the rest.
func sendResult(send func(*message) error, res *result) error {
	if res.Result != nil {
		for i := range res.Result.Doc.Pages {
			page := &res.Result.Doc.Pages[i]
			for s := page.Text; s != ""; {
				n := len(s)
				if n > dataChunk {
					n = dataChunk
					for n > 0 && !utf8.RuneStart(s[n]) {
						n--
					}
				}
				if err := send(&message{Text: &text{Page: i, Size: len(page.Text), S: s[:n]}}); err != nil {
					return err
				}
				s = s[n:]
			}
			page.Text = ""
		}
	}
	return send(&message{Result: res})
}

// child is the state a child keeps between documents: its PDF engine.
type child struct {
	dec    *gob.Decoder
	send   func(*message) error
	engine *extract.PDFEngine
	pdfKey [2]string // the engine's memory limit and cache directory
}

func (c *child) close() {
	if c.engine != nil {
		_ = c.engine.Close()
	}
}

// serve reads one document's bytes and processes it. Its error is a
// protocol failure; the document's own is in the result.
func (c *child) serve(req *request) (*result, error) {
	if req.Size < 0 || req.Size > req.MaxBytes {
		return nil, fmt.Errorf("document of %d bytes over the cap of %d", req.Size, req.MaxBytes)
	}
	buf := make([]byte, 0, req.Size)
	for int64(len(buf)) < req.Size {
		var d data
		if err := c.dec.Decode(&d); err != nil {
			return nil, fmt.Errorf("document bytes: %w", err)
		}
		if int64(len(buf)+len(d.Bytes)) > req.Size {
			return nil, errors.New("document longer than announced")
		}
		buf = append(buf, d.Bytes...)
	}
	opts := req.options()
	if req.Type == extract.TypePDF {
		engine, err := c.pdfEngine(req)
		if err != nil {
			return failure(err), nil
		}
		opts.PDF = engine
	}
	opts.Budget = extract.NewBudget(extract.BudgetConfig{Bytes: math.MaxInt64 / 4}) // one document at a time
	opts.Progress = func(done, total int) {
		_ = c.send(&message{Progress: &progress{Done: done, Total: total}})
	}
	res, err := process(context.Background(), req.Type, bytes.NewReader(buf), req.Size, opts)
	if err != nil {
		return failure(err), nil
	}
	if req.Chunking != nil {
		return c.sendChunks(req.Chunking, res)
	}
	return &result{Result: res}, nil
}

// sendChunks splits res's text as ch says and sends the chunks in batches;
// the result that follows holds the pages' numbers, not their text.
func (c *child) sendChunks(ch *Chunking, res *Result) (*result, error) {
	var sendErr error
	ch.Chunk.Progress = func(done, total int) {
		_ = c.send(&message{Progress: &progress{Done: done, Total: total, Chunking: true}})
	}
	n, err := splitBatches(context.Background(), res.Doc.Pages, ch, func(b *Batch) error {
		p, err := encodeBatch(b)
		if err == nil {
			err = c.send(&message{Batch: &batch{Data: p, N: len(b.Chunks)}})
		}
		sendErr = err
		return err
	})
	switch {
	case sendErr != nil:
		return nil, fmt.Errorf("chunks: %w", sendErr)
	case err != nil:
		return failure(err), nil
	}
	for i := range res.Doc.Pages {
		res.Doc.Pages[i].Text = ""
	}
	res.ChunkCount = n
	return &result{Result: res}, nil
}

// failure is the wire form of a document's error.
func failure(err error) *result {
	return &result{Err: err.Error(), Reason: extract.Reason(err)}
}

// pdfEngine returns the child's PDF engine for req's settings.
func (c *child) pdfEngine(req *request) (*extract.PDFEngine, error) {
	key := [2]string{strconv.FormatInt(req.PDFMemoryLimit, 10), req.PDFCacheDir}
	if c.engine != nil && c.pdfKey == key {
		return c.engine, nil
	}
	c.close()
	c.engine = nil
	engine, err := extract.NewPDFEngine(extract.PDFConfig{
		Instances: 1, MemoryLimit: req.PDFMemoryLimit, CacheDir: req.PDFCacheDir,
	})
	if err != nil {
		return nil, err
	}
	c.engine, c.pdfKey = engine, key
	return engine, nil
}

// InProcess extracts and analyses a document in this process, with no
// limits but opts's: the work a child does, for callers that run without a
// Pool. Its errors are Extract's.
func InProcess(ctx context.Context, typ extract.Type, r io.ReaderAt, size int64, opts extract.Options) (*Result, error) {
	return process(ctx, typ, r, size, opts)
}

// InProcessChunked is InProcess, then splits the text as ch says
// (Pool.ProcessChunked's in-process twin): Result.Chunks holds the chunks,
// Doc's pages keep their text.
func InProcessChunked(ctx context.Context, typ extract.Type, r io.ReaderAt, size int64, opts extract.Options, ch Chunking) (*Result, error) {
	ch, err := ch.withDefaults()
	if err != nil {
		return nil, err
	}
	res, err := process(ctx, typ, r, size, opts)
	if err != nil {
		return nil, err
	}
	if res.Chunks, err = inMemory(ctx, res.Doc.Pages, &ch); err != nil {
		return nil, err
	}
	res.ChunkCount = res.Chunks.Count
	return res, nil
}

func process(ctx context.Context, typ extract.Type, r io.ReaderAt, size int64, opts extract.Options) (*Result, error) {
	doc, err := extract.Extract(ctx, typ, r, size, opts)
	if err != nil {
		return nil, err
	}
	pages := make([]analyze.Page, len(doc.Pages))
	for i, p := range doc.Pages {
		pages[i] = analyze.Page{Number: p.Number, Text: p.Text}
	}
	fields, err := analyze.AnalyzeContext(ctx, pages, analyze.Options{Title: doc.Title})
	if err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	return &Result{Doc: doc, Fields: fields}, nil
}
