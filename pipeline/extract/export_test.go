package extract

import (
	"context"
	"image"
	"time"

	"github.com/klippa-app/go-pdfium/requests"
)

// EngineCallsImplementation reports whether e parses documents through its instances'
// implementation (Pdfium.GetImplementation), which is what lets a kill at the deadline run
// beside the call it stops without racing on the instance's own state.
func EngineCallsImplementation(e *PDFEngine) (bool, error) {
	inst, err := e.pool.GetInstance(10 * time.Second)
	if err != nil {
		return false, err
	}
	defer inst.Close()
	_, ok := inst.GetImplementation().(pdfiumCalls)
	return ok, nil
}

// RenderGray renders every page of pdf to a gray image at dpi on one of e's instances, as OCR
// renders a page.
func RenderGray(e *PDFEngine, pdf []byte, dpi int) ([]*image.Gray, error) {
	var pages []*image.Gray
	err := e.run(context.Background(), func(inst pdfiumCalls) (bool, error) {
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
