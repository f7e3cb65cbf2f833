package embedding

import (
	"context"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// HashingModel is the Model of the Hashing embedder. Its version changes
// whenever the vectors it computes do.
const HashingModel = "docket-hashing-v1"

// DefaultDimensions is the Hashing embedder's default dimension.
const DefaultDimensions = 256

// Weights of the features, relative to a word.
const (
	weightWord    = 1.0
	weightBigram  = 0.5
	weightTrigram = 0.25
	weightStop    = 0.1 // a stop word, instead of weightWord
)

// Feature kinds, hashed first so that equal strings of different kinds land
// apart.
const (
	kindWord byte = 'w'
	kindPair byte = 'p'
	kindGram byte = 'g'
)

// Hashing is a deterministic local embedder. It hashes the features of a
// text (lower-cased words, pairs of adjacent words, and the three-character
// pieces of each word, which catch shared stems) into Dimensions buckets
// with a random sign each, and normalises the sum to unit length. Common
// function words of seven European languages count for little. Texts that
// share words and word pieces get a higher cosine similarity. A text with
// no words gets the zero vector.
//
// It needs no model and no network and gives the same vectors on every
// machine, so it is the default and the embedder of tests. It is a lexical
// method: it does not know synonyms.
type Hashing struct {
	dims int
}

var _ Embedder = (*Hashing)(nil)

// NewHashing returns a Hashing embedder of the given dimension
// (DefaultDimensions if dims ≤ 0).
func NewHashing(dims int) *Hashing {
	if dims <= 0 {
		dims = DefaultDimensions
	}
	return &Hashing{dims: dims}
}

// Model returns HashingModel.
func (h *Hashing) Model() string { return HashingModel }

// Dimensions returns the vectors' length.
func (h *Hashing) Dimensions() int { return h.dims }

// Embed returns a unit vector (or the zero vector) for each text. It fails
// only if ctx is done.
func (h *Hashing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = h.vector(t)
	}
	return out, nil
}

// vector computes the embedding of one text.
func (h *Hashing) vector(text string) []float32 {
	acc := make([]float64, h.dims)
	prev := ""
	for w := range words(strings.ToLower(text)) {
		if prev != "" {
			h.add(acc, hashOf(kindPair, prev, " ", w), weightBigram)
		}
		prev = w
		if stopwords[w] {
			h.add(acc, hashOf(kindWord, w), weightStop)
			continue
		}
		h.add(acc, hashOf(kindWord, w), weightWord)
		h.addTrigrams(acc, w)
	}
	var sum float64
	for _, x := range acc {
		sum += x * x
	}
	v := make([]float32, h.dims)
	if sum == 0 {
		return v
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range acc {
		v[i] = float32(x * inv)
	}
	return v
}

// addTrigrams adds the three-rune pieces of "<w>", the word with its edges
// marked; a word of one rune has none beyond the word itself.
func (h *Hashing) addTrigrams(acc []float64, w string) {
	if utf8.RuneCountInString(w) < 2 {
		return
	}
	marked := "<" + w + ">"
	var at [3]int // byte offsets of the last three rune starts
	n := 0
	for i := range marked {
		at[0], at[1], at[2] = at[1], at[2], i
		n++
		if n >= 3 {
			_, size := utf8.DecodeRuneInString(marked[i:])
			h.add(acc, hashOf(kindGram, marked[at[0]:i+size]), weightTrigram)
		}
	}
}

// add adds weight to the bucket of hash x, with the sign given by x.
func (h *Hashing) add(acc []float64, x uint64, weight float64) {
	i := (x >> 1) % uint64(h.dims)
	if x&1 == 1 {
		weight = -weight
	}
	acc[i] += weight
}

// hashOf hashes a feature kind and the concatenation of parts: FNV-1a,
// then a finaliser that spreads the low bits.
func hashOf(kind byte, parts ...string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	x := uint64(offset)
	x = (x ^ uint64(kind)) * prime
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			x = (x ^ uint64(p[i])) * prime
		}
	}
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// words yields the words of s: runs of letters, digits and marks, except
// that each Han, Hiragana or Katakana character is a word by itself (those
// scripts do not separate words with spaces).
func words(s string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		start := -1
		for i, r := range s {
			inWord := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) && start >= 0
			cjk := inWord && r >= 0x2e80 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
			if start >= 0 && (!inWord || cjk) {
				if !yield(s[start:i]) {
					return
				}
				start = -1
			}
			switch {
			case cjk:
				if !yield(s[i : i+utf8.RuneLen(r)]) {
					return
				}
			case inWord && start < 0:
				start = i
			}
		}
		if start >= 0 {
			yield(s[start:])
		}
	}
}
