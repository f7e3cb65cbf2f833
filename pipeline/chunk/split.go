package chunk

// span is a chunk as a range of atoms, first and last included.
type span struct{ first, last int }

// size returns the size, in units, of the text from atom i to atom j, both
// scanned.
func (d *doc) size(i, j int) int {
	if j < i {
		return 0
	}
	if d.unit == Words {
		return j - i + 1
	}
	return int(d.at(j).runeEnd - d.at(i).runeStart)
}

// strengthAfter is the strength of the boundary after atom e.
func (d *doc) strengthAfter(e int) level {
	if !d.has(e + 1) {
		return levelParagraph
	}
	return d.at(e + 1).before
}

// splitter cuts a doc's atoms into spans, one at a time.
type splitter struct {
	d               *doc
	cfg             Config
	start, prevLast int
	done            bool
}

func newSplitter(d *doc, cfg Config) *splitter {
	return &splitter{d: d, cfg: cfg, prevLast: -1, done: !d.has(0)}
}

// next returns the next span, or false after the last. The atoms before
// the span may be dropped once it is returned.
func (s *splitter) next() (span, bool) {
	if s.done {
		return span{}, false
	}
	d, start := s.d, s.start
	limit := d.fit(start, s.cfg.Size)
	last := d.chooseEnd(start, max(start, s.prevLast+1), limit, s.cfg.Size)
	if !d.has(last + 1) {
		s.done = true
	} else {
		s.start, s.prevLast = d.overlapStart(start, last, s.cfg), last
	}
	return span{start, last}, true
}

// spans cuts all the atoms into chunks.
func (d *doc) spans(cfg Config) []span {
	var out []span
	for s := newSplitter(d, cfg); ; {
		sp, ok := s.next()
		if !ok {
			return out
		}
		out = append(out, sp)
	}
}

// fit returns the last atom j ≥ start such that atoms start..j fit in size
// units; start itself always fits since no atom is larger than a chunk.
func (d *doc) fit(start, size int) int {
	if d.unit == Words {
		j := start
		for j < start+size-1 && d.has(j+1) {
			j++
		}
		return j
	}
	limit := d.at(start).runeStart + int32(size)
	j := start
	for d.has(j+1) && d.at(j+1).runeEnd <= limit {
		j++
	}
	return j
}

// chooseEnd picks the last atom of the chunk starting at start among lo..limit:
// the latest paragraph break that leaves the chunk at least half full, else
// the latest sentence end, else the latest space; a chunk is cut inside a
// word (at limit) only if there is no space at all in reach.
func (d *doc) chooseEnd(start, lo, limit, size int) int {
	if !d.has(limit + 1) {
		return limit
	}
	var best [levelParagraph + 1]int // latest end per level, +1 so that 0 is none
	anyWord := 0
	for e := limit; e >= lo; e-- {
		s := d.strengthAfter(e)
		if s >= levelWord && anyWord == 0 {
			anyWord = e + 1
		}
		if 2*d.size(start, e) < size {
			if anyWord != 0 {
				break
			}
			continue
		}
		if best[s] == 0 {
			best[s] = e + 1
		}
	}
	for lv := levelParagraph; lv >= levelWord; lv-- {
		if best[lv] != 0 {
			return best[lv] - 1
		}
	}
	if anyWord != 0 {
		return anyWord - 1
	}
	return limit
}

// overlapStart returns the first atom of the chunk after the one spanning
// start..last: the earliest atom that repeats at most cfg.Overlap units and
// still lets the next atom fit, moved forward to a sentence start if one
// keeps at least half the overlap, or to a word boundary otherwise.
func (d *doc) overlapStart(start, last int, cfg Config) int {
	next := last + 1
	if cfg.Overlap == 0 {
		return next
	}
	k := start + 1
	for k <= last && (d.size(k, last) > cfg.Overlap || d.size(k, next) > cfg.Size) {
		k++
	}
	for s := k; s <= last && 2*d.size(s, last) >= cfg.Overlap; s++ {
		if d.at(s).before >= levelSentence {
			return s
		}
	}
	for k <= last && d.at(k).before == levelChar {
		k++
	}
	return k
}
