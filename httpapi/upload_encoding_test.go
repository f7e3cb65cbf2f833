package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// TestUpload_Encodings: text files are accepted in the encodings people's
// files are in, UTF-8 in any script whatever character the sniff window's
// end cuts; binary data is refused, saying it is binary.
func TestUpload_Encodings(t *testing.T) {
	t.Parallel()
	encode := func(e encoding.Encoding, s string) []byte {
		out, err := e.NewEncoder().String(s)
		if err != nil {
			t.Fatal(err)
		}
		return []byte(out)
	}
	const latin = "Grüße aus Köln — “quoted”, café. "
	korean := strings.Repeat("옛날 옛적에 호랑이가 살았습니다. ", 40)
	emoji := strings.Repeat("Launch 🚀 done ✅ family 👨‍👩‍👧‍👦 ", 40)
	type upload struct {
		name string
		data []byte
		want int
	}
	cases := []upload{
		{"windows-1252", encode(charmap.Windows1252, latin), http.StatusAccepted},
		{"latin-1", encode(charmap.ISO8859_1, "Grüße aus Köln, café."), http.StatusAccepted},
		{"utf-16le bom", encode(unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), latin), http.StatusAccepted},
		{"utf-16be bom", encode(unicode.UTF16(unicode.BigEndian, unicode.UseBOM), latin), http.StatusAccepted},
		{"utf-16le", encode(unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), latin), http.StatusAccepted},
		{"utf-16be", encode(unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), latin), http.StatusAccepted},
		{"binary", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), http.StatusUnsupportedMediaType},
	}
	for shift := range 4 {
		pad := strings.Repeat("a", shift)
		cases = append(cases,
			upload{"korean+" + pad, []byte(pad + korean), http.StatusAccepted},
			upload{"emoji+" + pad, []byte(pad + emoji), http.StatusAccepted})
	}
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 1000)
		for _, c := range cases {
			r := e.upload(t, a.key, "notes.txt", c.data)
			if r.status != c.want {
				t.Errorf("%s: status %d, want %d: %s", c.name, r.status, c.want, r.body)
			}
			if c.want != http.StatusAccepted && !strings.Contains(string(r.body), "binary") {
				t.Errorf("%s: %s; want it to say the data is binary", c.name, r.body)
			}
		}
	})
}
