package extracttest

import "math/bits"

// Similarity returns the Levenshtein ratio of a and b, the extraction benchmarks' score:
// 2·LCS/(|a|+|b|), counted in runes, where LCS is the length of their longest common
// subsequence. 1 is equal texts, 0 texts with no rune in common; two empty texts are equal.
func Similarity(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	if len(ra)+len(rb) == 0 {
		return 1
	}
	return 2 * float64(LCS(ra, rb)) / float64(len(ra)+len(rb))
}

// LCS returns the length of the longest common subsequence of a and b, computed 64 runes of a
// at a time (Hyyrö's bit-parallel algorithm): O(|a|·|b|/64) time, O(|a|) memory.
func LCS(a, b []rune) int {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	words := (len(a) + 63) / 64
	match := map[rune][]uint64{} // the positions of each rune in a
	for i, r := range a {
		m := match[r]
		if m == nil {
			m = make([]uint64, words)
			match[r] = m
		}
		m[i/64] |= 1 << (i % 64)
	}
	// A zero bit of v marks a position of a that ends a common subsequence one longer.
	v := make([]uint64, words)
	for k := range v {
		v[k] = ^uint64(0)
	}
	for _, r := range b {
		m, ok := match[r]
		if !ok {
			continue
		}
		var carry uint64
		for k := range v {
			u := v[k] & m[k]
			var sum uint64
			sum, carry = bits.Add64(v[k], u, carry)
			v[k] = sum | (v[k] &^ m[k])
		}
	}
	n := 0
	for k, x := range v {
		width := 64
		if k == words-1 && len(a)%64 != 0 {
			width = len(a) % 64
			x &= 1<<width - 1
		}
		n += width - bits.OnesCount64(x)
	}
	return n
}
