package extracttest

import (
	"math/rand/v2"
	"testing"
)

// lcsTable is the textbook dynamic program LCS must agree with.
func lcsTable(a, b []rune) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func TestLCS_MatchesTable(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(n int, alphabet string) []rune {
		r := make([]rune, n)
		for i := range r {
			r[i] = rune(alphabet[rng.IntN(len(alphabet))])
		}
		return r
	}
	for i := range 300 {
		alphabet := []string{"ab", "abcd", "abcdefghij é"}[i%3]
		a, b := word(rng.IntN(300), alphabet), word(rng.IntN(300), alphabet)
		if got, want := LCS(a, b), lcsTable(a, b); got != want {
			t.Fatalf("LCS(%q, %q) = %d, want %d", string(a), string(b), got, want)
		}
	}
}

func TestSimilarity(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want float64
	}{
		{"", "", 1},
		{"abc", "abc", 1},
		{"abc", "", 0},
		{"abc", "xyz", 0},
		{"kitten", "sitting", 2 * 4.0 / 13}, // "ittn"
		{"café", "cafe", 2 * 3.0 / 8},
	} {
		if got := Similarity(c.a, c.b); got != c.want {
			t.Errorf("Similarity(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
