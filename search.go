package docket

// ChunkSearchParams selects the candidates of a search: the tenant's chunks
// whose text matches Phrases in the store's lexical index, best first by
// the index's rank. A search never reads a chunk the index did not match.
type ChunkSearchParams struct {
	// Phrases are what a chunk's text must contain: each is a run of words
	// matched in order, as the index splits, folds and stems them (one word
	// is a phrase of one). Characters other than letters and digits only
	// separate words.
	Phrases []string
	// Any matches a chunk that contains any of the phrases; by default it
	// must contain all of them.
	Any bool
	// DocumentID, when set, matches only that document's chunks.
	DocumentID string
	// Model and Dimensions: the hits of chunks whose vector is of this model
	// and length carry it; other hits carry none.
	Model      string
	Dimensions int
	// Limit caps the hits (required, ≥ 1).
	Limit int
	// Ranked, when positive, caps the matches ranked: a search whose words
	// are in more chunks ranks only this many of them (which ones is the
	// store's choice: SQLite the newest, PostgreSQL those first in its heap),
	// and so costs about the same however common its words are. 0 ranks
	// every match.
	Ranked int
}

// SearchHit is a chunk the lexical index matched.
type SearchHit struct {
	Chunk    *Chunk
	Filename string // the document's
	// Rank is the lexical index's relevance: higher is better, comparable
	// only within one search.
	Rank float64
}
