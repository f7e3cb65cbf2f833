// Package chunk splits a document's extracted pages into overlapping chunks
// sized for embedding.
//
// Size is measured in runes or in words (a word being a run of non-space
// characters, or a single CJK character). Each chunk ends at the strongest
// boundary that keeps it at least half full: a paragraph break first (a blank
// line or the end of a page), then the end of a sentence, then a space. A
// chunk never ends inside a word, with one exception: a single word longer
// than the whole chunk size is cut between characters (never inside a
// character and its combining marks), so that no chunk outgrows what an
// embedding model accepts.
//
// Consecutive chunks share up to Overlap units of text, starting at a word
// boundary. Every chunk records the pages it spans. The output depends only
// on the input and the configuration.
package chunk

import (
	"errors"
	"fmt"
	"math"
)

// Page is one page of extracted text.
type Page struct {
	Number int    // 1-based page number, recorded in the chunks
	Text   string // the page's text; paragraphs separated by blank lines
}

// Chunk is a piece of the document's text.
type Chunk struct {
	Index     int    // position in the document, from 0
	Text      string // the text, with the original spacing inside it
	PageStart int    // Number of the page where the chunk begins
	PageEnd   int    // Number of the page where it ends (PageStart if on one page)
}

// Unit is what Size and Overlap count.
type Unit int

// Units.
const (
	Runes Unit = iota // Unicode code points, spaces included
	Words             // words: runs of non-space characters, or single CJK characters
)

// String returns the unit's name.
func (u Unit) String() string {
	switch u {
	case Runes:
		return "runes"
	case Words:
		return "words"
	}
	return fmt.Sprintf("Unit(%d)", int(u))
}

// Defaults.
const (
	DefaultRuneSize = 800 // Size for Runes
	DefaultWordSize = 200 // Size for Words
)

// ErrConfig is wrapped by the errors returned for an invalid Config.
var ErrConfig = errors.New("invalid chunk config")

// Config sets how text is split. The zero value is usable.
type Config struct {
	// Unit is what Size and Overlap count. Default Runes.
	Unit Unit

	// Size is the largest chunk, in Units. Default 800 runes or 200 words.
	Size int

	// Overlap is the most text, in Units, that a chunk repeats from the end
	// of the previous one. Zero means 15% of Size (120 for 800 runes); a
	// negative value means no overlap. It must be less than Size.
	Overlap int

	// Progress, if set, is called after each chunk with the bytes of text
	// consumed so far and the total; the last call has done == total.
	Progress func(done, total int)
}

// withDefaults returns cfg with defaults filled in, or an error wrapping
// ErrConfig.
func (cfg Config) withDefaults() (Config, error) {
	switch cfg.Unit {
	case Runes, Words:
	default:
		return cfg, fmt.Errorf("%w: unknown unit %d", ErrConfig, int(cfg.Unit))
	}
	if cfg.Size < 0 {
		return cfg, fmt.Errorf("%w: size %d is negative", ErrConfig, cfg.Size)
	}
	if cfg.Size == 0 {
		cfg.Size = DefaultRuneSize
		if cfg.Unit == Words {
			cfg.Size = DefaultWordSize
		}
	}
	switch {
	case cfg.Overlap < 0:
		cfg.Overlap = 0
	case cfg.Overlap == 0:
		cfg.Overlap = cfg.Size * 15 / 100
	case cfg.Overlap >= cfg.Size:
		return cfg, fmt.Errorf("%w: overlap %d must be less than size %d %s",
			ErrConfig, cfg.Overlap, cfg.Size, cfg.Unit)
	}
	return cfg, nil
}

// Split cuts pages into chunks. Pages with no text produce nothing but still
// count in the page range of a chunk that spans them. No pages, or only
// empty ones, give no chunks and no error. Split returns an error only for an
// invalid Config (wrapping ErrConfig) or an input of 2 GiB or more.
func Split(pages []Page, cfg Config) ([]Chunk, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	size := 0
	for _, p := range pages {
		size += len(p.Text) + len(pageBreak)
		if size >= math.MaxInt32 {
			return nil, fmt.Errorf("chunk: input of %d bytes or more is too large", size)
		}
	}
	d := scan(pages, cfg)
	var chunks []Chunk
	for s := newSplitter(d, cfg); ; {
		sp, ok := s.next()
		if !ok {
			break
		}
		first, last := d.at(sp.first), d.at(sp.last)
		chunks = append(chunks, Chunk{
			Index:     len(chunks),
			Text:      d.text(first, last),
			PageStart: pages[first.page].Number,
			PageEnd:   pages[last.page].Number,
		})
		if cfg.Progress != nil && !s.done {
			cfg.Progress(int(last.end), d.total)
		}
		d.drop(s.start) // the next chunk starts there
	}
	if cfg.Progress != nil {
		cfg.Progress(d.total, d.total)
	}
	return chunks, nil
}
