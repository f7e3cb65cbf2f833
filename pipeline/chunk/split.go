package chunk

import "sort"

// span is a chunk as a range of atoms, first and last included.
type span struct{ first, last int }

// size returns the size, in units, of the text from atom i to atom j.
func (d *doc) size(i, j int) int {
	if j < i {
		return 0
	}
	if d.unit == Words {
		return j - i + 1
	}
	return int(d.atoms[j].runeEnd - d.atoms[i].runeStart)
}

// strengthAfter is the strength of the boundary after atom e.
func (d *doc) strengthAfter(e int) level {
	if e+1 >= len(d.atoms) {
		return levelParagraph
	}
	return d.atoms[e+1].before
}

// spans cuts the atoms into chunks.
func (d *doc) spans(cfg Config) []span {
	var out []span
	n := len(d.atoms)
	for start, prevLast := 0, -1; start < n; {
		limit := d.fit(start, cfg.Size)
		last := d.chooseEnd(start, max(start, prevLast+1), limit, cfg.Size)
		out = append(out, span{start, last})
		if last == n-1 {
			break
		}
		start, prevLast = d.overlapStart(start, last, cfg), last
	}
	return out
}

// fit returns the last atom j ≥ start such that atoms start..j fit in size
// units; start itself always fits since no atom is larger than a chunk.
func (d *doc) fit(start, size int) int {
	n := len(d.atoms)
	if d.unit == Words {
		return min(n-1, start+size-1)
	}
	limit := d.atoms[start].runeStart + int32(size)
	j := sort.Search(n-start, func(k int) bool {
		return d.atoms[start+k].runeEnd > limit
	})
	return max(start, start+j-1)
}

// chooseEnd picks the last atom of the chunk starting at start among lo..limit:
// the latest paragraph break that leaves the chunk at least half full, else
// the latest sentence end, else the latest space; a chunk is cut inside a
// word (at limit) only if there is no space at all in reach.
func (d *doc) chooseEnd(start, lo, limit, size int) int {
	if limit == len(d.atoms)-1 {
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
		if d.atoms[s].before >= levelSentence {
			return s
		}
	}
	for k <= last && d.atoms[k].before == levelChar {
		k++
	}
	return k
}
