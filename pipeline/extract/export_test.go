package extract

import (
	"context"
	"image"
	"time"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/requests"
)

// EngineReachesModule reports whether e can reach an instance's wazero module, which is how a
// running call is stopped at its deadline without racing on go-pdfium's instance fields.
func EngineReachesModule(e *PDFEngine) (bool, error) {
	inst, err := e.pool.GetInstance(10 * time.Second)
	if err != nil {
		return false, err
	}
	defer inst.Close()
	return moduleOf(inst) != nil, nil
}

// LongString is longString.
var LongString = longString

// LongTitle is longTitle.
var LongTitle = longTitle

// SetTitleCheck sets the title check's bound until the returned function restores it. Tests
// that call it must not be parallel.
func SetTitleCheck(n int) (restore func()) {
	old := titleCheckBytes
	titleCheckBytes = n
	return func() { titleCheckBytes = old }
}

// EngineMovesMemory reports whether e moves an instance's memory out of the Go heap (Linux),
// leaving the instance working: it still opens and reads a document afterwards.
func EngineMovesMemory(e *PDFEngine, pdf []byte) (bool, error) {
	moved := false
	err := e.run(context.Background(), func(inst pdfium.Pdfium) (bool, error) {
		e.arenaMu.Lock()
		_, moved = e.arenas[moduleOf(inst)]
		e.arenaMu.Unlock()
		job := &pdfJob{data: pdf, opts: &Options{MaxPages: 10, MaxTextLength: 1 << 20}, ctx: context.Background(), doc: &Document{}}
		return job.run(inst)
	})
	return moved, err
}

// ObjStmTitle is objStmTitle with the /Title keys outside object streams found in data.
func ObjStmTitle(data []byte, limit int) string {
	refs, _ := titleRefs(data)
	return objStmTitle(data, newTitleScan(limit, refs))
}

// TitleUnread is titleUnread.
var TitleUnread = titleUnread

// EngineMemoryAfter parses pdf on one of e's instances, the title read or not as Extract
// decides, and returns the size its WebAssembly memory grew to: what PDFium needed at most.
func EngineMemoryAfter(e *PDFEngine, pdf []byte) (size uint32, err error) {
	err = e.run(context.Background(), func(inst pdfium.Pdfium) (bool, error) {
		job := &pdfJob{data: pdf, opts: &Options{MaxPages: 10, MaxTextLength: 1 << 20}, ctx: context.Background(),
			doc: &Document{}, skipTitle: titleUnread(pdf)}
		broken, err := job.run(inst)
		if mod := moduleOf(inst); mod != nil && mod.Memory() != nil {
			size = mod.Memory().Size()
		}
		return broken, err
	})
	return size, err
}

// RenderGray renders every page of pdf to a gray image at dpi on one of e's instances, as OCR
// renders a page.
func RenderGray(e *PDFEngine, pdf []byte, dpi int) ([]*image.Gray, error) {
	var pages []*image.Gray
	err := e.run(context.Background(), func(inst pdfium.Pdfium) (bool, error) {
		opened, err := inst.OpenDocument(&requests.OpenDocument{File: &pdf})
		if err != nil {
			return openErr(err)
		}
		defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: opened.Document}) //nolint:errcheck // best effort
		count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: opened.Document})
		if err != nil {
			return true, err
		}
		for i := range count.PageCount {
			img, _, broken, err := renderGray(inst, opened.Document, i, dpi, DefaultOCRMaxPixels)
			if err != nil {
				return broken, err
			}
			pages = append(pages, img)
		}
		return false, nil
	})
	return pages, err
}

// RenderSize is renderSize.
var RenderSize = renderSize
