package docket

import (
	"encoding/binary"
	"fmt"
	"math"
)

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

// ChunkListParams selects a page of a document's chunks.
type ChunkListParams struct {
	DocumentID string
	// From is the first chunk index listed (0: from the start).
	From int
	// Limit caps the chunks listed; 0 lists them all.
	Limit int
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

// EncodeVector is the form both drivers store a vector in: float32
// little-endian, 4 bytes a number; nil for no vector.
func EncodeVector(v []float32) []byte {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// DecodeVector reverses EncodeVector.
func DecodeVector(b []byte) ([]float32, error) {
	if b == nil {
		return nil, nil
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("vector of %d bytes is not a run of float32s", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
