package extract

import "bytes"

// titleScan reads the objects of object streams a byte at a time, as they inflate, keeping
// only what the title check needs: the token it is in (names and numbers up to a few dozen
// bytes; of a string only its length, counted to the bound), the objects whose value is the
// string it is in, and what /Title keys refer to.
type titleScan struct {
	limit int
	refs  map[int]bool // objects /Title keys refer to, by number (PDFium ignores generations)
	longs map[int]bool // objects in object streams whose value is a string over limit
	found bool
	// numbered holds the objects in object streams whose value is a number or keyword (a
	// reference among them); the Lost flags say a map reached maxTitleRefs and dropped some.
	numbered               map[int]bool
	refsLost, numberedLost bool

	state   scanState
	nest    int  // parentheses open in a literal string
	escaped bool // the byte before was a backslash, in a literal string
	size    int  // bytes of the current string so far, counted to limit+1
	isTitle bool // the current string is the value of a /Title key
	owners  []int
	pending []int // objects whose table offset was reached: their value is the next token
	tok     [32]byte
	tokLen  int
	after   int // 1 just after a /Title key, 2 after "/Title N", 3 after "/Title N G"
	refNum  int
}

// scanState is where titleScan is in the data.
type scanState uint8

const (
	idle    scanState = iota
	comment           // from % to the end of the line
	literal           // a (…) string
	hex               // a <…> string
	name              // /…
	regular           // a number or keyword
	angle             // after '<': a dictionary or a hex string
)

// maxTitleRefs bounds the objects the check remembers as referred to or as long strings.
const maxTitleRefs = 4096

func newTitleScan(limit int, refs map[objRef]bool) *titleScan {
	s := &titleScan{limit: limit, refs: map[int]bool{}, longs: map[int]bool{}, numbered: map[int]bool{}}
	for r := range refs {
		s.refs[r.num] = true
	}
	return s
}

// long reports whether a /Title string over the bound was found.
func (s *titleScan) long() bool { return s.found }

// reset starts a new object stream.
func (s *titleScan) reset() {
	s.state, s.nest, s.escaped, s.size, s.isTitle = idle, 0, false, 0, false
	s.owners, s.pending, s.tokLen, s.after = s.owners[:0], s.pending[:0], 0, 0
}

// objectAt notes that object num starts at the byte c, about to be read, and reports whether
// that is where a token starts (or white space between tokens): if not, PDFium, reading the
// object from its offset, would see other tokens than this scan does.
func (s *titleScan) objectAt(num int, c byte) bool {
	switch s.state {
	case idle:
	case name, regular:
		if isRegular(c) {
			return false
		}
	case comment:
		if c != '\n' && c != '\r' {
			return false
		}
	default:
		return false
	}
	s.pending = append(s.pending, num)
	return true
}

// run reads the bytes at the start of b that need no more than counting — white space
// between tokens, the rest of a comment, name or number, of a string already over the bound —
// a loop over them at once rather than a step each, and returns how many it read.
func (s *titleScan) run(b []byte) int {
	switch s.state {
	case idle:
		i := 0
		for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
			i++
		}
		return i
	case comment:
		if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
			return i
		}
		return len(b)
	case name, regular:
		i := 0
		for ; i < len(b) && isRegular(b[i]); i++ {
			if s.tokLen < len(s.tok) {
				s.tok[s.tokLen] = b[i]
			}
			s.tokLen++
		}
		return i
	case literal:
		if s.size <= s.limit {
			return 0
		}
		for i, c := range b {
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '(':
				s.nest++
			case c == ')':
				if s.nest--; s.nest == 0 {
					s.state = idle
					return i + 1
				}
			}
		}
		return len(b)
	case hex:
		if s.size <= s.limit {
			return 0
		}
		if i := bytes.IndexByte(b, '>'); i >= 0 {
			s.state = idle
			return i + 1
		}
		return len(b)
	}
	return 0
}

// step reads one byte.
func (s *titleScan) step(c byte) {
	switch s.state {
	case comment:
		if c == '\n' || c == '\r' {
			s.state = idle
		}
		return
	case literal:
		s.grow()
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '(':
			s.nest++
		case c == ')':
			if s.nest--; s.nest == 0 {
				s.state = idle
			}
		}
		return
	case hex:
		s.grow()
		if c == '>' {
			s.state = idle
		}
		return
	case angle:
		if c == '<' { // a dictionary
			s.state, s.after = idle, 0
			s.begin(false)
			return
		}
		s.beginString(hex)
		s.step(c)
		return
	case name, regular:
		if isRegular(c) {
			if s.tokLen < len(s.tok) {
				s.tok[s.tokLen] = c
			}
			s.tokLen++
			return
		}
		s.endToken()
	}
	s.idle(c)
}

// idle reads a byte between tokens.
func (s *titleScan) idle(c byte) {
	switch c {
	case 0, '\t', '\n', '\f', '\r', ' ':
	case '%':
		s.state = comment
	case '(':
		s.beginString(literal)
		s.nest = 1
	case '<':
		s.state = angle
	case ')', '>', '[', ']', '{', '}':
		s.begin(false)
		s.after = 0
	default: // a name, number or keyword
		if c != '/' {
			s.noteNumbered()
		}
		s.begin(false)
		s.state = regular
		if c == '/' {
			s.state = name
		}
		s.tok[0], s.tokLen = c, 1
	}
}

// begin starts a token; a string takes the objects whose offset was just reached.
func (s *titleScan) begin(str bool) {
	s.owners = s.owners[:0]
	if str {
		s.owners = append(s.owners, s.pending...)
	}
	s.pending = s.pending[:0]
}

// noteNumbered notes the objects whose value, starting now, is a number or keyword.
func (s *titleScan) noteNumbered() {
	for _, num := range s.pending {
		if len(s.numbered) < maxTitleRefs {
			s.numbered[num] = true
		} else if !s.numbered[num] {
			s.numberedLost = true
		}
	}
}

// beginString starts a literal or hex string, its opening byte counted.
func (s *titleScan) beginString(st scanState) {
	s.begin(true)
	s.state, s.size, s.escaped = st, 1, false
	s.isTitle = s.after == 1
	s.after = 0
}

// grow counts a byte of the current string and notes the string once it is over the bound.
func (s *titleScan) grow() {
	if s.size > s.limit {
		return
	}
	if s.size++; s.size <= s.limit {
		return
	}
	if s.isTitle {
		s.found = true
	}
	for _, num := range s.owners {
		if s.refs[num] || len(s.longs) == maxTitleRefs { // more long strings than the budget allows
			s.found = true
		}
		s.longs[num] = true
	}
}

// endToken ends a name or a number or keyword, and follows /Title N G R references.
func (s *titleScan) endToken() {
	tok := s.tok[:min(s.tokLen, len(s.tok))]
	long := s.tokLen > len(s.tok)
	st := s.state
	s.state = idle
	if st == name {
		s.after = 0
		if !long && pdfName(tok) == "Title" {
			s.after = 1
		}
		return
	}
	n := atoiOr(tok, -1)
	switch {
	case long:
		s.after = 0
	case s.after == 1 && n >= 0:
		s.after, s.refNum = 2, n
	case s.after == 2 && n >= 0:
		s.after = 3
	case s.after == 3 && string(tok) == "R":
		s.after = 0
		switch {
		case len(s.refs) < maxTitleRefs:
			s.refs[s.refNum] = true
		case !s.refs[s.refNum]:
			s.refsLost = true
		}
		if s.longs[s.refNum] {
			s.found = true
		}
	default:
		s.after = 0
	}
}
