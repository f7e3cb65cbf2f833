package extracttest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
)

// ImagePDF returns a PDF of one page per image and nothing else: each page is its image, drawn
// to fill it, sized so the image is dpi dots per inch (an 8-bit gray /XObject /Image, Flate
// compressed). It is what a scanner writes: pages without any text layer.
func ImagePDF(pages []*image.Gray, dpi int) []byte {
	w := &pdfWriter{}
	w.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	// Objects: 1 catalog, 2 page tree, then three per page: page, content, image.
	kids := make([]byte, 0, 8*len(pages))
	for i := range pages {
		kids = fmt.Appendf(kids, "%d 0 R ", 3+3*i)
	}
	w.object("<< /Type /Catalog /Pages 2 0 R >>")
	w.object(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids, len(pages)))
	for i, img := range pages {
		px, py := img.Bounds().Dx(), img.Bounds().Dy()
		pw, ph := float64(px)*72/float64(dpi), float64(py)*72/float64(dpi)
		w.object(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] "+
			"/Resources << /XObject << /Im1 %d 0 R >> >> /Contents %d 0 R >>", pw, ph, 5+3*i, 4+3*i))
		w.stream("", fmt.Appendf(nil, "q %.2f 0 0 %.2f 0 0 cm /Im1 Do Q", pw, ph))
		w.stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d "+
			"/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", px, py), zlibGray(img))
	}
	w.finish(fmt.Sprintf("/Size %d /Root 1 0 R", len(w.offsets)+1))
	return w.buf.Bytes()
}

// zlibGray compresses img's rows, top to bottom, as a PDF image stream holds them.
func zlibGray(img *image.Gray) []byte {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		off := img.PixOffset(b.Min.X, y)
		_, _ = zw.Write(img.Pix[off : off+b.Dx()]) // a bytes.Buffer does not fail
	}
	_ = zw.Close()
	return buf.Bytes()
}
