package driver

import (
	"errors"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestValidateQueueName_SameAsRegex: the loop accepts exactly the names
// the regular expression it replaced accepts, over edge cases and random
// names around the allowed characters and the length limit.
func TestValidateQueueName_SameAsRegex(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,62}$`)
	names := []string{
		"", "a", "0", "z9", "default", "a_", "a.b-c_d", "_a", ".a", "-a", "A", "aB", "a b", " a", "a ",
		"ab\n", "\na", "é", "aé", "a\u00a0", "ａ", "a\x00", "a/b", "a:b", "a`", "a{", "@a", "[a",
		strings.Repeat("a", 62), strings.Repeat("a", 63), strings.Repeat("a", 64),
		strings.Repeat("é", 31), "0" + strings.Repeat("-", 62), "0" + strings.Repeat("-", 63),
	}
	const others = "AZ /é\t\n\x00ÿ`{@[:"
	r := rand.New(rand.NewPCG(3, 4))
	runes := []rune(others)
	for i := range 20000 {
		n := r.IntN(70)
		if r.IntN(4) == 0 {
			n = 60 + r.IntN(8)
		}
		var b strings.Builder
		for range n {
			if i%2 == 1 && r.IntN(8) == 0 {
				b.WriteRune(runes[r.IntN(len(runes))])
			} else {
				b.WriteByte("abcxyz0189_.-"[r.IntN(13)])
			}
		}
		names = append(names, b.String())
	}
	var accepted int
	for _, name := range names {
		err := ValidateQueueName(name)
		if (err == nil) != re.MatchString(name) {
			t.Errorf("queue %q: ValidateQueueName %v, regular expression %t", name, err, re.MatchString(name))
		}
		if err == nil {
			accepted++
		} else if !errors.Is(err, ErrInvalid) {
			t.Errorf("queue %q: error %v does not wrap ErrInvalid", name, err)
		}
	}
	if accepted < 2000 || accepted > len(names)-2000 {
		t.Fatalf("%d of %d names accepted: want both outcomes well represented", accepted, len(names))
	}
}
