package queue

import (
	"context"
	"errors"
	"log/slog"
	"testing"
)

// TestSweep_DrainsFullBatches: a sweep repeats its batch while batches come
// back full, so one tick clears everything due (the churn soak found the
// cleaner deleting one batch a minute while jobs finished faster), and
// reports the total once.
func TestSweep_DrainsFullBatches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		batches   []int // what each call returns
		fail      int   // the call (1-based) that fails; 0 for none
		wantCalls int
		wantTotal int // -1: no report
	}{
		{"one short batch", []int{3}, 0, 1, 3},
		{"empty", []int{0}, 0, 1, 0},
		{"full batches then short", []int{10, 10, 10, 4}, 0, 4, 34},
		{"full batches then empty", []int{10, 10, 0}, 0, 3, 20},
		{"error first", []int{0}, 1, 1, -1},
		{"error after progress", []int{10, 10, 0}, 3, 3, 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reported := -1
			w := &Worker{logger: slog.New(slog.DiscardHandler)}
			w.cfg.Hooks.Maintained = func(task string, n int) {
				if task != "clean" {
					t.Errorf("task %q", task)
				}
				reported = n
			}
			calls := 0
			w.sweep(context.Background(), "clean", 10, func() (int, error) {
				calls++
				if calls == c.fail {
					return 0, errors.New("store down")
				}
				return c.batches[calls-1], nil
			})
			if calls != c.wantCalls || reported != c.wantTotal {
				t.Fatalf("%d calls, reported %d; want %d calls, %d", calls, reported, c.wantCalls, c.wantTotal)
			}
		})
	}
}
