package docket

// Chunk is a piece of a document's text with its embedding.
type Chunk struct {
	DocumentID string
	TenantID   string
	Index      int // 0-based position in the document
	Text       string
	PageStart  int // first page (1-based) the chunk's text comes from
	PageEnd    int // last page
	// Vector is the embedding; Model and Dimensions name it. Vectors of
	// different models never compare.
	Vector     []float32
	Model      string
	Dimensions int
}

// ChunkScanParams selects the chunks a search ranks.
type ChunkScanParams struct {
	Model string // only vectors of this model
	// Dimensions: only vectors of this length (a model served with another
	// size does not compare either).
	Dimensions int
}

// SearchHit is one chunk ranked by a search.
type SearchHit struct {
	Chunk *Chunk
	Score float64 // cosine similarity, -1..1
}
