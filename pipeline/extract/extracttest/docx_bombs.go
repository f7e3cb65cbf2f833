package extracttest

import (
	"fmt"
	"strings"
)

// docxRows returns the ZIP and XML rows of the bomb table.
func docxRows() []row {
	valid := DOCX{Body: Para("Hello.")}
	return []row{
		{Name: "zip bomb 6 MB to 1 GiB, honest sizes", Type: "docx", build: func() []byte { return ZipBombDOCX(1<<30, 0) }, Want: []string{"too_large"}},
		{Name: "zip bomb 6 MB to 1 GiB, claims 4 KB", Type: "docx", build: func() []byte { return ZipBombDOCX(1<<30, 4096) }, Want: []string{"malformed", "too_large"}},
		{Name: "document.xml of 100 MB", Type: "docx", build: func() []byte { return ZipBombDOCX(100<<20, 0) }, Want: []string{"too_large"}},
		{Name: "central directory claims 10^7 entries", Type: "docx", build: func() []byte { return RawZip(docxEntries(), 10_000_000) }, Want: []string{"too_large"}},
		{Name: "central directory holds 65,546 entries, claims 10", Type: "docx", build: func() []byte { return ManyEntriesZip(65536+10, 10) }, Want: []string{"too_large"}},
		{Name: "central directory claims 65535 entries", Type: "docx", build: func() []byte { return RawZip(docxEntries(), 65535) }, Want: []string{"too_large", "malformed"}},
		{Name: "entry ../evil", Type: "docx", build: func() []byte { return withEntry("../evil.txt") }, Want: []string{"malformed"}},
		{Name: "entry /abs", Type: "docx", build: func() []byte { return withEntry("/etc/passwd") }, Want: []string{"malformed"}},
		{Name: "entry ..\\evil", Type: "docx", build: func() []byte { return withEntry("..\\evil.txt") }, Want: []string{"malformed"}},
		{Name: "entry C:\\x", Type: "docx", build: func() []byte { return withEntry("C:\\x") }, Want: []string{"malformed"}},
		{Name: "overlapping entries", Type: "docx", build: OverlapDOCX, Want: []string{"malformed"}},
		{Name: "duplicate document.xml", Type: "docx", build: func() []byte { return RawZip(append(docxEntries(), docxEntries()[0]), 0) }, Want: []string{"malformed"}},
		{Name: "zip without word/document.xml", Type: "docx", build: func() []byte { return RawZip([]RawEntry{{Name: "a.txt", Data: []byte("a")}}, 0) }, Want: []string{"unsupported_type"}},
		{Name: "zip in zip x10", Type: "docx", build: func() []byte {
			return DOCX{Body: Para("Outer."), Files: map[string][]byte{"word/embeddings/nested.zip": NestedZip(10)}}.Bytes()
		}, Want: []string{""}},
		{Name: "xml nested 10^6 deep", Type: "docx", build: func() []byte { return DOCX{Document: DeepXML(1_000_000)}.Bytes() }, Want: []string{"malformed", "too_large"}},
		{Name: "xml nested 50,000 deep", Type: "docx", build: func() []byte { return DOCX{Document: DeepXML(50_000)}.Bytes() }, Want: []string{"malformed"}},
		{Name: "billion laughs", Type: "docx", build: func() []byte { return DOCX{Document: []byte(BillionLaughs)}.Bytes() }, Want: []string{"malformed"}},
		{Name: "undeclared entity", Type: "docx", build: func() []byte { return DOCX{Body: "<w:p><w:r><w:t>&lol9;</w:t></w:r></w:p>"}.Bytes() }, Want: []string{"malformed"}},
		{Name: "unclosed document", Type: "docx", build: func() []byte {
			return DOCX{Document: []byte("<w:document xmlns:w=\"" + WordNS + "\"><w:body><w:p>")}.Bytes()
		}, Want: []string{"malformed"}},
		{Name: "truncated zip", Type: "docx", build: func() []byte { return valid.Bytes()[:200] }, Want: []string{"unsupported_type", "malformed"}},
	}
}

// docxEntries returns the minimal stored entries of a DOCX.
func docxEntries() []RawEntry {
	doc := `<w:document xmlns:w="` + WordNS + `"><w:body>` + Para("Hello.") + `</w:body></w:document>`
	return []RawEntry{{Name: "word/document.xml", Data: []byte(doc)}}
}

func withEntry(name string) []byte {
	return RawZip(append(docxEntries(), RawEntry{Name: name, Data: []byte("x")}), 0)
}

// ZipBombDOCX returns a DOCX whose document.xml is a DEFLATE stream of n spaces, claiming
// claimed uncompressed bytes (0: the truth).
func ZipBombDOCX(n int64, claimed uint64) []byte {
	if claimed == 0 {
		claimed = uint64(n)
	}
	return RawZip([]RawEntry{{Name: "word/document.xml", Data: DeflateRepeat(' ', n), Method: 8, USize: claimed}}, 0)
}

// OverlapDOCX returns a ZIP whose two central-directory entries share one local entry (the
// overlapping-file zip bomb).
func OverlapDOCX() []byte {
	e := docxEntries()
	return RawZip(append(e, RawEntry{Name: "word/other.xml", Data: e[0].Data, SharesWith: 1}), 0)
}

// NestedZip returns a ZIP holding a ZIP holding a ZIP ..., depth deep.
func NestedZip(depth int) []byte {
	data := []byte("core")
	for range depth {
		data = RawZip([]RawEntry{{Name: "inner.zip", Data: data}}, 0)
	}
	return data
}

// DeepXML returns a document.xml with elements nested depth deep.
func DeepXML(depth int) []byte {
	var b strings.Builder
	b.WriteString(`<w:document xmlns:w="` + WordNS + `"><w:body>`)
	b.WriteString(strings.Repeat("<w:p>", depth))
	b.WriteString(strings.Repeat("</w:p>", depth))
	b.WriteString(`</w:body></w:document>`)
	return []byte(b.String())
}

// BillionLaughs is a document.xml whose DOCTYPE declares exponentially expanding entities.
const BillionLaughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>`

// ManyEntriesZip returns a ZIP of a DOCX's main part and n-1 tiny entries whose end record
// claims claim entries (archive/zip compares the count only modulo 65536).
func ManyEntriesZip(n int, claim uint64) []byte {
	entries := docxEntries()
	for i := 1; i < n; i++ {
		entries = append(entries, RawEntry{Name: fmt.Sprintf("e/%d", i), Data: []byte{'x'}})
	}
	return RawZip(entries, claim)
}
