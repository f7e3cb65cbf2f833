package analyze

// match is a recognised piece of text.
type match[T any] struct {
	start, end int
	value      T
}

// picker passes on, in order of position, the matches that do not overlap
// an earlier (or, at the same start, longer) one. A pass adds its matches
// as it finds them and calls flush with the least start any later match
// can have; only the matches near the current position are held.
type picker[T any] struct {
	pending []match[T] // by start, then longest first, then as added
	end     int        // end of the last match passed on
	yield   func(T) bool
	stopped bool // yield asked for no more
}

// add holds m until a flush passes it on or drops it.
func (p *picker[T]) add(m match[T]) {
	i := len(p.pending)
	for i > 0 && (m.start < p.pending[i-1].start || m.start == p.pending[i-1].start && m.end > p.pending[i-1].end) {
		i--
	}
	p.pending = append(p.pending, m)
	copy(p.pending[i+1:], p.pending[i:])
	p.pending[i] = m
}

// flush passes on the held matches that start before bound and reports
// whether yield wants more.
func (p *picker[T]) flush(bound int) bool {
	n := 0
	for _, m := range p.pending {
		if m.start >= bound || p.stopped {
			break
		}
		n++
		if m.start >= p.end {
			p.end = m.end
			p.stopped = !p.yield(m.value)
		}
	}
	p.pending = p.pending[:copy(p.pending, p.pending[n:])]
	return !p.stopped
}
