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
	// Index is the chunk's 0-based position in the document: unique and in
	// order, not always contiguous (a PDF processed in page ranges numbers
	// each range's chunks from a base of its own).
	Index     int
	Text      string
	PageStart int // first page (1-based) the chunk's text comes from
	PageEnd   int // last page
	// Vector is the embedding; Model and Dimensions name it. Vectors of
	// different models never compare.
	Vector     []float32
	Model      string
	Dimensions int
	// Language is the ISO 639-1 code of the document's language ("" when
	// unknown). The lexical index stems the chunk's words by it where the
	// store can (PostgreSQL text-search configurations); other languages
	// and "" are indexed word for word.
	Language string
}

// ChunkListParams selects a page of a document's chunks.
type ChunkListParams struct {
	DocumentID string
	// From is the first chunk index listed (0: from the start).
	From int
	// Limit caps the chunks listed; 0 lists them all.
	Limit int
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
