package extract

import (
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
)

// readTitle returns the document's /Title, cut as capTitle cuts it. PDFium hands a metadata
// string over whole: it is built in the instance's memory (bounded by its cap) and copied into
// the Go heap, so a title costs at most a few times what the instance could hold.
func readTitle(inst pdfiumCalls, doc references.FPDF_DOCUMENT) (string, error) {
	t, err := inst.FPDF_GetMetaText(&requests.FPDF_GetMetaText{Document: doc, Tag: "Title"})
	if err != nil {
		return "", err
	}
	return capTitle(t.Value), nil
}
