package extract

// MaxPDFStringBytes bounds a string object outside streams, as written in the file: a PDF
// with a longer one (a 30 MB /Title, say) does not have its metadata read, since PDFium has no
// way to read a prefix and would materialise the whole string, several times over, to hand it
// out. Nothing else reads such strings: page text comes from content streams.
const MaxPDFStringBytes = 8 << 20

// longString reports whether data holds a literal "(...)" or hex "<...>" string longer than
// limit bytes outside stream data. Comments are skipped; an unterminated string counts to the
// end of the data.
func longString(data []byte, limit int) bool {
	long := false
	pdfStrings(data, func(start, end int) bool {
		long = end-start > limit
		return !long
	})
	return long
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
