package extract

import (
	"errors"
	"fmt"
	"image"
	"math"

	"github.com/klippa-app/go-pdfium/enums"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
)

// errPageTooBig is a page whose bitmap would not fit MaxPixels even at the lowest resolution
// worth reading (minRenderDPI).
var errPageTooBig = errors.New("page too large to render")

// minRenderDPI is the least resolution a page is rendered at for OCR: below it, body text is
// a few pixels high and unreadable anyway.
const minRenderDPI = 72

// renderSize returns the pixel size of a page of w×h points at dpi, lowered so that the bitmap
// holds at most maxPixels pixels, and the resolution it ends up at.
func renderSize(w, h float64, dpi, maxPixels int) (pw, ph, at int, err error) {
	if !(w > 0 && h > 0) || math.IsInf(w, 0) || math.IsInf(h, 0) {
		return 0, 0, 0, fmt.Errorf("page size %gx%g points: %w", w, h, ErrMalformed)
	}
	scale := float64(dpi) / 72
	if px := w * scale * h * scale; px > float64(maxPixels) {
		scale *= math.Sqrt(float64(maxPixels) / px)
	}
	if scale*72 < minRenderDPI {
		return 0, 0, 0, fmt.Errorf("%gx%g points at %d dpi: %w", w, h, minRenderDPI, errPageTooBig)
	}
	pw, ph = max(1, int(w*scale)), max(1, int(h*scale))
	return pw, ph, int(math.Round(scale * 72)), nil
}

// renderGray renders page i (0-based) of doc, with its annotations' appearances (as loadPage
// merges them), into an 8-bit gray image on white at dpi, or less when the page is larger than
// maxPixels at dpi (see renderSize). PDFium draws into a gray bitmap of its own memory, under
// the instance's memory cap; the pixels are copied out before it is destroyed. broken reports
// an instance that must not be used again.
func renderGray(inst pdfiumCalls, doc references.FPDF_DOCUMENT, i, dpi, maxPixels int) (img *image.Gray, at int, broken bool, err error) {
	pg, broken, err := loadPage(inst, doc, i)
	if err != nil {
		return nil, 0, broken, err
	}
	defer inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: pg}) //nolint:errcheck // best effort
	ref := requests.Page{ByReference: &pg}
	w, err := inst.FPDF_GetPageWidthF(&requests.FPDF_GetPageWidthF{Page: ref})
	if err != nil {
		return nil, 0, true, fmt.Errorf("page width: %w: %w", err, ErrMalformed)
	}
	h, err := inst.FPDF_GetPageHeightF(&requests.FPDF_GetPageHeightF{Page: ref})
	if err != nil {
		return nil, 0, true, fmt.Errorf("page height: %w: %w", err, ErrMalformed)
	}
	pw, ph, at, err := renderSize(float64(w.PageWidth), float64(h.PageHeight), dpi, maxPixels)
	if err != nil {
		return nil, 0, false, err
	}
	bm, err := inst.FPDFBitmap_CreateEx(&requests.FPDFBitmap_CreateEx{
		Width: pw, Height: ph, Format: enums.FPDF_BITMAP_FORMAT_GRAY, Pointer: uint64(0),
	})
	if err != nil {
		return nil, 0, true, fmt.Errorf("bitmap %dx%d: %w: %w", pw, ph, err, ErrTooLarge)
	}
	if bm.Bitmap == "" {
		return nil, 0, false, fmt.Errorf("bitmap %dx%d: no memory: %w", pw, ph, ErrTooLarge)
	}
	defer inst.FPDFBitmap_Destroy(&requests.FPDFBitmap_Destroy{Bitmap: bm.Bitmap}) //nolint:errcheck // best effort
	if _, err := inst.FPDFBitmap_FillRect(&requests.FPDFBitmap_FillRect{
		Bitmap: bm.Bitmap, Width: pw, Height: ph, Color: 0xFFFFFFFF,
	}); err != nil {
		return nil, 0, true, fmt.Errorf("fill: %w: %w", err, ErrMalformed)
	}
	if _, err := inst.FPDF_RenderPageBitmap(&requests.FPDF_RenderPageBitmap{
		Bitmap: bm.Bitmap, Page: ref, SizeX: pw, SizeY: ph, Flags: enums.FPDF_RENDER_FLAG_ANNOT,
	}); err != nil {
		return nil, 0, true, fmt.Errorf("render: %w: %w", err, ErrMalformed)
	}
	img, err = copyGray(inst, bm.Bitmap, pw, ph)
	if err != nil {
		return nil, 0, true, err
	}
	return img, at, false, nil
}

// copyGray copies a gray bitmap of w×h pixels out of the instance's memory.
func copyGray(inst pdfiumCalls, bm references.FPDF_BITMAP, w, h int) (*image.Gray, error) {
	st, err := inst.FPDFBitmap_GetStride(&requests.FPDFBitmap_GetStride{Bitmap: bm})
	if err != nil {
		return nil, fmt.Errorf("bitmap stride: %w: %w", err, ErrMalformed)
	}
	buf, err := inst.FPDFBitmap_GetBuffer(&requests.FPDFBitmap_GetBuffer{Bitmap: bm})
	if err != nil {
		return nil, fmt.Errorf("bitmap buffer: %w: %w", err, ErrMalformed)
	}
	stride := st.Stride
	if stride < w || len(buf.Buffer) < stride*(h-1)+w {
		return nil, fmt.Errorf("bitmap of %d bytes, stride %d, for %dx%d pixels: %w", len(buf.Buffer), stride, w, h, ErrMalformed)
	}
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		copy(img.Pix[y*img.Stride:y*img.Stride+w], buf.Buffer[y*stride:y*stride+w])
	}
	return img, nil
}
