package extract

import (
	"context"
	"encoding/binary"
	"reflect"
	"strings"
	"unicode/utf16"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/tetratelabs/wazero/api"
)

// readTitle returns the document's /Title, cut as capTitle cuts it. PDFium hands a metadata
// string over whole, into a buffer the size of all of it; go-pdfium's FPDF_GetMetaText then
// copies that buffer into the Go heap and decodes all of it. Here the buffer stays in the
// instance's memory (bounded by its cap) and only the prefix that is kept is read out. Where
// go-pdfium's internals are out of reach (another version), it falls back to FPDF_GetMetaText.
func readTitle(inst pdfium.Pdfium, doc references.FPDF_DOCUMENT) (string, error) {
	mod := moduleOf(inst)
	handle, ok := documentHandle(inst, doc)
	if mod == nil || !ok {
		t, err := inst.FPDF_GetMetaText(&requests.FPDF_GetMetaText{Document: doc, Tag: "Title"})
		if err != nil {
			return "", err
		}
		return capTitle(t.Value), nil
	}
	return readMeta(mod, handle, "Title")
}

// readMeta reads the metadata string tag of the document at handle through PDFium's own
// exports, keeping a prefix of 2 × titleRaw bytes of UTF-16 (at least titleRaw of UTF-8).
func readMeta(mod api.Module, handle uint64, tag string) (string, error) {
	ctx := context.Background()
	m := wasmMem{mod: mod, ctx: ctx}
	tagPtr, err := m.cString(tag)
	if err != nil {
		return "", err
	}
	defer m.free(tagPtr)
	getMeta := mod.ExportedFunction("FPDF_GetMetaText")
	res, err := getMeta.Call(ctx, handle, tagPtr, 0, 0)
	if err != nil {
		return "", err
	}
	n := uint64(uint32(res[0])) // bytes of UTF-16LE, with the terminating NUL
	if n <= 2 {
		return "", nil
	}
	buf, err := m.malloc(n)
	if err != nil {
		return "", err
	}
	defer m.free(buf)
	if _, err := getMeta.Call(ctx, handle, tagPtr, buf, n); err != nil {
		return "", err
	}
	keep := min(n, 2*titleRaw+4) &^ 1
	raw, ok := mod.Memory().Read(uint32(buf), uint32(keep)) // a view, not a copy
	if !ok {
		return "", errWasmMemory
	}
	units := make([]uint16, len(raw)/2)
	for i := range units {
		units[i] = binary.LittleEndian.Uint16(raw[2*i:])
	}
	s := strings.TrimPrefix(string(utf16.Decode(units)), "\ufeff")
	s, _, _ = strings.Cut(s, "\x00")
	return capTitle(s), nil
}

// documentHandle digs PDFium's pointer to doc out of go-pdfium's WebAssembly implementation
// (its unexported documentRefs map), or reports false if the library's shape changed.
func documentHandle(inst pdfium.Pdfium, doc references.FPDF_DOCUMENT) (h uint64, ok bool) {
	defer func() {
		if recover() != nil {
			h, ok = 0, false
		}
	}()
	v := reflect.ValueOf(inst.GetImplementation())
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return 0, false
	}
	refs := v.Elem().FieldByName("documentRefs")
	if refs.Kind() != reflect.Map || refs.Type().Key() != reflect.TypeFor[references.FPDF_DOCUMENT]() {
		return 0, false
	}
	d := refs.MapIndex(reflect.ValueOf(doc))
	if !d.IsValid() || d.Kind() != reflect.Pointer || d.IsNil() {
		return 0, false
	}
	p := d.Elem().FieldByName("handle")
	if p.Kind() != reflect.Pointer || p.IsNil() || p.Elem().Kind() != reflect.Uint64 {
		return 0, false
	}
	return p.Elem().Uint(), true
}
