package extract

import "bytes"

// MaxPDFStringBytes bounds a string object outside streams, as written in the file: a PDF
// with a longer one (a 30 MB /Title, say) does not have its metadata read, since PDFium has no
// way to read a prefix and would materialise the whole string, several times over, to hand it
// out. Nothing else reads such strings: page text comes from content streams.
const MaxPDFStringBytes = 8 << 20

// longString reports whether data holds a literal "(...)" or hex "<...>" string longer than
// limit bytes outside stream data. Comments are skipped; an unterminated string counts to the
// end of the data.
func longString(data []byte, limit int) bool {
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == 's' && isStreamStart(data, i):
			end := bytes.Index(data[i:], []byte("endstream"))
			if end < 0 {
				return false
			}
			i += end + len("endstream") - 1
		case c == '%':
			for i < len(data) && data[i] != '\n' && data[i] != '\r' {
				i++
			}
		case c == '(':
			end := literalEnd(data, i)
			if end-i > limit {
				return true
			}
			i = end - 1
		case c == '<' && i+1 < len(data) && data[i+1] == '<':
			i++
		case c == '<':
			end := bytes.IndexByte(data[i:], '>')
			if end < 0 {
				end = len(data) - i
			}
			if end > limit {
				return true
			}
			i += end
		}
	}
	return false
}

// literalEnd returns the index just past the literal string starting at data[start] == '(':
// parentheses nest, a backslash escapes the next byte.
func literalEnd(data []byte, start int) int {
	depth := 0
	for i := start; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(data)
}
