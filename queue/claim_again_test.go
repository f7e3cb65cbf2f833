package queue

import (
	"testing"
	"time"
)

// claimAgain backs off from ten cooldowns to the poll interval while claims
// leave tenants untaken, and waits for the poll again once they do not.
func TestClaimAgain(t *testing.T) {
	t.Parallel()
	const cooldown, poll = 2 * time.Millisecond, 100 * time.Millisecond
	var got []time.Duration
	last := time.Duration(0)
	for _, more := range []bool{true, true, true, true, true, false, true} {
		last = claimAgain(last, more, cooldown, poll)
		got = append(got, last)
	}
	want := []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond, poll, poll, 0, 20 * time.Millisecond}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits %v, want %v", got, want)
		}
	}
}
