package extract

import (
	"bytes"
	"slices"
)

// activeKeys are the PDF names that make content active: scripts, actions run on opening or
// that start programs, and embedded files. The value is the name reported.
var activeKeys = map[string]string{
	"JavaScript":    "JavaScript",
	"JS":            "JavaScript",
	"OpenAction":    "OpenAction",
	"Launch":        "Launch",
	"EmbeddedFile":  "EmbeddedFile",
	"EmbeddedFiles": "EmbeddedFile",
}

// activeNames scans the raw bytes of a PDF for active-content names (decoding #xx escapes, as
// in /J#61vaScript) and returns the kinds found, sorted. Names inside compressed object streams
// are not seen here; PDFium's own counts of document JavaScript and attachments cover those.
func activeNames(data []byte) []string {
	var found []string
	var name [32]byte
	for i := 0; i < len(data); i++ {
		if data[i] == 's' && isStreamStart(data, i) {
			// Stream data is binary: a name found there would be noise.
			end := bytes.Index(data[i:], []byte("endstream"))
			if end < 0 {
				break
			}
			i += end + len("endstream") - 1
			continue
		}
		if data[i] != '/' {
			continue
		}
		n := 0
		j := i + 1
		for ; j < len(data) && isNameChar(data[j]) && n < len(name); j++ {
			c := data[j]
			if c == '#' && j+2 < len(data) && isHex(data[j+1]) && isHex(data[j+2]) {
				c = unhex(data[j+1])<<4 | unhex(data[j+2])
				j += 2
			}
			name[n] = c
			n++
		}
		if kind, ok := activeKeys[string(name[:n])]; ok && !slices.Contains(found, kind) {
			found = append(found, kind)
		}
		i = j - 1
	}
	slices.Sort(found)
	return found
}

// isStreamStart reports whether the keyword "stream" and its end of line start at data[i].
func isStreamStart(data []byte, i int) bool {
	rest := data[i:]
	if !bytes.HasPrefix(rest, []byte("stream")) || i == 0 || isNameChar(data[i-1]) && data[i-1] != '>' {
		return false
	}
	rest = rest[len("stream"):]
	return bytes.HasPrefix(rest, []byte("\n")) || bytes.HasPrefix(rest, []byte("\r\n"))
}

// isNameChar reports whether c may appear in a PDF name: a regular character, not white space
// or a delimiter.
func isNameChar(c byte) bool {
	switch c {
	case 0, '\t', '\n', '\f', '\r', ' ', '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return false
	}
	return c > ' ' && c < 0x7f
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
