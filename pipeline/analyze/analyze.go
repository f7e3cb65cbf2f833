// Package analyze extracts a document's fields from its text: title,
// language, page and word counts, dates, amounts of money and key phrases.
//
// It works on plain text with simple, deterministic rules (no models): the
// same pages always give the same Fields. Languages are told apart by their
// most frequent words (en, de, fr, es, it, nl, pt) or by their script (ja,
// zh, ko, el). Dates and amounts are recognised in the usual written forms
// of those European languages and normalised (ISO 8601 dates, decimal
// amounts with ISO 4217 currency codes). Key phrases are ranked RAKE-style:
// runs of words between stop words and punctuation, scored by how often
// their words occur and with how many others.
package analyze

import (
	"context"
	"strings"
)

// Page is one page of extracted text.
type Page struct {
	Number int    // 1-based page number
	Text   string // the page's text
}

// Fields are what Analyze finds in a document.
type Fields struct {
	Title      string   `json:"title"`
	Language   string   `json:"language"` // ISO 639-1 code, "" if unknown
	PageCount  int      `json:"page_count"`
	WordCount  int      `json:"word_count"`
	Dates      []string `json:"dates"`       // YYYY-MM-DD, in order of first appearance, no repeats
	Amounts    []Amount `json:"amounts"`     // in order of first appearance, no repeats
	KeyPhrases []string `json:"key_phrases"` // lower case, best first
}

// Amount is a sum of money.
type Amount struct {
	Value    string `json:"value"`    // decimal, "." before any fraction, no grouping: "1234.56"
	Currency string `json:"currency"` // ISO 4217 code: "EUR"
}

// Options tune Analyze. The zero value is usable.
type Options struct {
	// Title, if not blank, is the title (for example from the file's
	// metadata), without a producer's prefix such as "Microsoft Word - ";
	// otherwise, or when it is only a file name ("T081E.DOC"), the title
	// is taken from the text.
	Title string

	// MaxKeyPhrases is how many key phrases to return. Default 10.
	MaxKeyPhrases int

	// MaxItems caps the dates and the amounts returned. Default 100.
	MaxItems int
}

// Analyze extracts the fields of the document made of pages. Slices in the
// result are never nil, so they encode as JSON arrays.
func Analyze(pages []Page, opts Options) Fields {
	f, _ := AnalyzeContext(context.Background(), pages, opts) // never done
	return f
}

// AnalyzeContext is Analyze under ctx: it stops with ctx's error soon after
// ctx is done. Its time is linear in the text and the memory it holds,
// beyond the pages, bounded.
func AnalyzeContext(ctx context.Context, pages []Page, opts Options) (Fields, error) {
	if opts.MaxKeyPhrases <= 0 {
		opts.MaxKeyPhrases = 10
	}
	if opts.MaxItems <= 0 {
		opts.MaxItems = 100
	}
	st := newStopper(ctx)
	f := overview(st, pages, opts)
	dates, amounts := newSet[int](opts.MaxItems), newSet[Amount](opts.MaxItems)
	for _, p := range pages {
		if !dates.full() {
			scanDates(p.Text, st, dates.add)
		}
		if !amounts.full() {
			scanAmounts(p.Text, st, amounts.add)
		}
	}
	f.Dates = make([]string, len(dates.items))
	for i, day := range dates.items {
		f.Dates[i] = isoDate(day)
	}
	f.Amounts = append([]Amount{}, amounts.items...)
	f.KeyPhrases = keyPhrases(st, pages, f.Language, opts.MaxKeyPhrases)
	if st.err != nil {
		return Fields{}, st.err
	}
	return f, nil
}

// Overview returns the fields that are quick to find, the same as
// Analyze's: title, language, page and word counts. The others are nil. It
// gives a document's first results as soon as its text is extracted.
func Overview(pages []Page, opts Options) Fields {
	f, _ := OverviewContext(context.Background(), pages, opts) // never done
	return f
}

// OverviewContext is Overview under ctx: it stops with ctx's error soon
// after ctx is done.
func OverviewContext(ctx context.Context, pages []Page, opts Options) (Fields, error) {
	st := newStopper(ctx)
	f := overview(st, pages, opts)
	if st.err != nil {
		return Fields{}, st.err
	}
	return f, nil
}

func overview(st *stopper, pages []Page, opts Options) Fields {
	f := Fields{Title: metadataTitle(opts.Title), PageCount: len(pages), Language: detectLanguage(st, pages)}
	if f.Title == "" {
		f.Title = findTitle(st, pages)
	}
	for _, p := range pages {
		f.WordCount += countWords(st, p.Text)
	}
	return f
}

// set keeps the first max distinct items in order.
type set[T comparable] struct {
	seen  map[T]bool
	items []T
	max   int
}

func newSet[T comparable](limit int) *set[T] {
	return &set[T]{seen: map[T]bool{}, max: limit}
}

// add adds x if it is new and there is room; it reports whether there is
// room left.
func (s *set[T]) add(x T) bool {
	if !s.full() && !s.seen[x] {
		s.seen[x] = true
		s.items = append(s.items, x)
	}
	return !s.full()
}

func (s *set[T]) full() bool { return len(s.items) >= s.max }

// clean trims s and collapses its runs of spaces into one space.
func clean(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
